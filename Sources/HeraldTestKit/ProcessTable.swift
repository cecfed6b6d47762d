import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What `/proc` says about this machine's processes: parents, names and CPU time, for the test kit's
/// handling of the servers and `herald` processes it starts, and for the benchmark's CPU figures.
public enum ProcessTable {
    /// One process's line of `/proc/PID/stat`.
    public struct Entry: Sendable {
        /// The process id.
        public let pid: pid_t
        /// Its parent's process id.
        public let parent: pid_t
        /// The kernel's name for it (`comm`: the executable's name, cut to 15 bytes).
        public let name: String
        /// CPU seconds it used itself (user and system).
        public let ownSeconds: Double
        /// The part of ``ownSeconds`` spent in the kernel on its behalf (system calls, page faults).
        public let systemSeconds: Double
        /// CPU seconds of the children it reaped.
        public let reapedSeconds: Double
    }

    /// The process `pid`, or `nil` when it is gone.
    public static func entry(_ pid: pid_t) -> Entry? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { return nil }
        // After the name: state, parent, …, user and system time (fields 11 and 12), reaped children's (13, 14).
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 14 else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let seconds = { (index: Int) in (Double(fields[index]) ?? 0) / ticks }
        return Entry(pid: pid, parent: pid_t(fields[1]) ?? 0, name: String(stat[stat.index(after: open)..<close]),
                     ownSeconds: seconds(11) + seconds(12), systemSeconds: seconds(12), reapedSeconds: seconds(13) + seconds(14))
    }

    /// The processes whose parent is `parent`.
    public static func children(of parent: pid_t) -> [Entry] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { name in
            guard name.allSatisfy(\.isNumber), let pid = pid_t(name), let entry = entry(pid), entry.parent == parent else { return nil }
            return entry
        }
    }
}
