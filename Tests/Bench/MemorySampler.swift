import Foundation
import Synchronization

/// Samples a process's resident memory every 50 ms while a phase runs and keeps the peaks.
///
/// RssAnon (the process's own heap and stacks) is what the gateway costs; total RSS adds the pages
/// of file-mapped libraries, which every process using them shares. The kernel keeps a peak of the
/// total only (VmHWM), so the anonymous peak is sampled.
final class MemorySampler: Sendable {
    private let peaks = Mutex<(anonymous: Double, total: Double)>((0, 0))
    private let task = Mutex<Task<Void, Never>?>(nil)

    private let pid: Int32

    private init(pid: Int32) { self.pid = pid }

    /// Starts sampling `pid`.
    static func start(pid: Int32) -> MemorySampler {
        let sampler = MemorySampler(pid: pid)
        let sampling = Task {
            while !Task.isCancelled {
                sampler.record()
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        sampler.task.withLock { $0 = sampling }
        return sampler
    }

    /// Stops sampling (one last sample first) and returns the peaks in MiB.
    func finish() -> (anonymous: Double, total: Double) {
        task.withLock { $0?.cancel() }
        record()
        return peaks.withLock { $0 }
    }

    private func record() {
        guard let sample = Self.sample(pid: pid) else { return }
        peaks.withLock { $0 = (max($0.anonymous, sample.anonymous), max($0.total, sample.total)) }
    }

    /// RssAnon and VmRSS of `pid` in MiB, from /proc.
    static func sample(pid: Int32) -> (anonymous: Double, total: Double)? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        func mebibytes(_ field: String) -> Double? {
            let line = status.split(separator: "\n").first { $0.hasPrefix(field) }
            return line?.split(separator: " ").dropFirst().first.flatMap { Double($0) }.map { $0 / 1024 }
        }
        guard let anonymous = mebibytes("RssAnon:"), let total = mebibytes("VmRSS:") else { return nil }
        return (anonymous, total)
    }
}
