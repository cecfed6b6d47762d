import Foundation
import HeraldCore
import HeraldTestKit
import Histogram

#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Paced load at `rate` (every message at its own time, never in bursts): publish→commit latency
/// from the store (ms resolution), next to a plain C-client subscriber on the same broker (the baseline).
///
/// One second of the same load warms Herald up first and is reported apart: over the first ~150 ms
/// of a new store, latency climbs to tens of milliseconds, and in a five-second phase that start
/// alone decides the p99. Measured: a second publish right after the first shows none of it, and
/// neither does Herald restarted on a store that already holds 20,000 messages (7 ms at most in its
/// first 20 ms, then 3–4 ms).
///
/// With `deliver`, the sink publishes every output to the broker while the load comes in, and a
/// subscriber in this process measures publish→notification (µs resolution): the whole pipeline.
/// Without, the sink points where nothing listens and outputs stay queued, as in the throughput phases.
func latencyPhase(_ workload: Workload, rate: Double, deliver: Bool, directory: TemporaryDirectory) async throws -> LatencyResult {
    let broker = try await MosquittoBroker()
    let name = deliver ? "latency" : "latency-queued"
    var configuration = try workload.configuration(port: broker.port, storePath: directory.path("\(name)-\(Int(rate)).sqlite"), sinkDelivers: deliver)
    configuration.storeURL = try await workload.postgres?.createDatabase()
    let configPath = try directory.write("\(name)-\(Int(rate)).yaml", configuration.yaml)
    let herald = try HeraldProcess(configPath: configPath, logPath: directory.path("herald-\(name)-\(Int(rate)).log"))
    try await herald.waitUntilConnected(connections: workload.connections(sinkDelivers: deliver))
    let notifications = LatencySamples()
    let subscriber = deliver ? try await TestMQTTClient(port: broker.port, subscriptions: ["users/+/notifications"]) { message in
        notifications.add(publishedIn: message.text, after: "\"preview\":\"t=")
    } : nil
    // Baseline from the same run: a plain C-client subscriber on the input topics (publish→broker→client).
    let baselineSamples = LatencySamples()
    let baseline = try await TestMQTTClient(port: broker.port, subscriptions: ["chats/+/messages"]) { message in
        baselineSamples.add(publishedIn: message.text, after: "\"body\":\"t=")
    }
    let store = try inspection(of: configuration)

    // Warm-up: one second of load under message ids after the workload's own.
    let warmUp = max(1, Int(rate))
    try await publish(workload, port: broker.port, range: workload.messages..<(workload.messages + warmUp), ratePerSecond: rate)
    let total = workload.messages + warmUp
    try await eventually("herald to commit the warm-up", timeout: .seconds(60)) { try store.statistics().messages >= warmUp }
    let measuredFrom = nowMicros()
    let before = ProcessStats(pid: herald.child.pid)
    let databaseBefore = workload.postgres?.cpuSeconds()
    let meter = CPUSplitMeter(broker: broker)
    let publishStarted = ContinuousClock.now
    try await publish(workload, port: broker.port, ratePerSecond: rate)
    let published = ContinuousClock.now
    try await waitUntilCommitted(workload, by: [herald], store: { store }, timeout: .seconds(30))
    var outboxEmptySeconds: Double?
    if let subscriber {
        try await eventually("notifications received", timeout: .seconds(60)) { notifications.count >= total }
        try await subscriber.close()
        // Badges and receipts too: how long after the last publish every output had left.
        try await eventually("the outbox to empty", timeout: .seconds(300), poll: .milliseconds(10)) { try store.statistics().outbox == 0 }
        outboxEmptySeconds = seconds(ContinuousClock.now - published)
    }
    let after = ProcessStats(pid: herald.child.pid)
    let cpu = after.cpuSeconds - before.cpuSeconds
    let databaseSeconds = databaseBefore.flatMap { earlier in workload.postgres.map { $0.cpuSeconds() - earlier } }
    let machine = meter.finish(messages: workload.messages, consumerSeconds: cpu, databaseSeconds: databaseSeconds)
    let phaseSeconds = seconds(ContinuousClock.now - publishStarted)
    let commits = CommitFigures(adminPort: configuration.adminPort)
    try await eventually("baseline subscriber received all", timeout: .seconds(60)) { baselineSamples.count >= total }
    try await baseline.close()
    herald.child.signal(SIGTERM)
    _ = try await herald.child.waitForExit()

    var commit = Histogram<UInt64>(highestTrackableValue: 3_600_000, numberOfSignificantValueDigits: .three)
    var warmUpCommit = commit
    for timing in try store.messageLatenciesMilliseconds() {
        if timing.sentAt >= measuredFrom / 1000 {
            _ = commit.record(UInt64(max(0, timing.latency)))
        } else {
            _ = warmUpCommit.record(UInt64(max(0, timing.latency)))
        }
    }
    return LatencyResult(commit: commit, warmUpCommit: warmUpCommit,
                         notification: deliver ? notifications.histogram(from: measuredFrom) : nil,
                         broker: baselineSamples.histogram(from: measuredFrom),
                         cpuPerThousand: cpu / Double(workload.messages) * 1000,
                         kernel: after.kernelClause(since: before, messages: workload.messages), commits: commits,
                         outboxEmptySeconds: outboxEmptySeconds, machine: machine, phaseSeconds: phaseSeconds)
}

/// The latency phase's figures: the histograms, and Herald's CPU while it took the measured load in
/// (and, when the sink delivers, published every notification and badge).
struct LatencyResult {
    /// Publish→commit of the measured messages, in milliseconds.
    var commit: Histogram<UInt64>
    /// Publish→commit during the warm-up second, Herald's start included.
    var warmUpCommit: Histogram<UInt64>
    /// Publish→notification in microseconds, when the sink delivers.
    var notification: Histogram<UInt64>?
    /// Publish→plain subscriber in microseconds.
    var broker: Histogram<UInt64>
    var cpuPerThousand: Double
    /// The kernel's share of that CPU and Herald's read and write system calls per message.
    var kernel: String
    /// Herald's commits over the phase, warm-up included.
    var commits: CommitFigures?
    /// When the sink delivers: seconds from the last publish until every output (badges and receipts
    /// too) had left the outbox.
    var outboxEmptySeconds: Double?
    /// Every process's CPU over the measured load, until Herald had committed it (and, when the sink
    /// delivers, until the outbox was empty): the broker, this bench (the publisher, both subscribers and
    /// its polls of the store), Herald and the PostgreSQL server.
    var machine: CPUSplit
    /// Wall-clock seconds of that span.
    var phaseSeconds: Double
}

/// Publish stamps and latencies (µs) from a subscriber's network thread.
final class LatencySamples: Sendable {
    private let state = Mutex<[(stamp: Int64, latency: Int64)]>([])

    /// Records the latency of a message whose publish time (µs) follows `marker` in `text`.
    func add(publishedIn text: String, after marker: String) {
        guard let range = text.range(of: marker) else { return }
        let stamp = Int64(text[range.upperBound...].prefix { $0.isNumber }) ?? 0
        let latency = nowMicros() - stamp
        state.withLock { $0.append((stamp, latency)) }
    }

    var count: Int { state.withLock { $0.count } }

    /// The latencies of the messages published at or after `stamp`.
    func histogram(from stamp: Int64) -> Histogram<UInt64> {
        var histogram = Histogram<UInt64>(highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)
        for sample in state.withLock({ $0 }) where sample.stamp >= stamp { _ = histogram.record(UInt64(max(0, sample.latency))) }
        return histogram
    }
}

/// Where the phase's CPU went, and how busy that kept the cores: near all of them, the processes queue
/// for a core and latency grows with that queue, not with any one of them. Under a light load much of each
/// process's CPU goes with time, not messages (polls, timers, a database's background work), so the rate
/// the cores could carry at that cost is given only once they are at least half busy.
private func machineLine(_ latency: LatencyResult, messages: Int) -> String {
    let split = latency.machine
    let busy = split.busy(atRate: Double(messages) / max(latency.phaseSeconds, 0.001))
    let parts = split.database == nil ? "broker / this bench / Herald" : "broker / this bench / Herald / PostgreSQL"
    let ceiling = busy >= 0.5 ? ", and at this cost they carry at most \(format(split.ceiling)) msg/s" : ""
    return "  CPU, s/1000 messages (\(parts)): \(split.figures); the \(CPUSplit.cores) cores \(format(busy * 100))% busy "
        + "while it lasted\(ceiling)"
}

/// The latency phase's lines, for the full report and `--latency-only` alike.
func latencyReport(_ latency: LatencyResult, rate: Double, messages: Int) -> String {
    func microseconds(_ histogram: Histogram<UInt64>) -> String {
        "p50 \(format(Double(histogram.valueAtPercentile(50)) / 1000, 2)) ms   p99 \(format(Double(histogram.valueAtPercentile(99)) / 1000, 2)) ms   "
            + "max \(format(Double(histogram.max) / 1000, 2)) ms"
    }
    func milliseconds(_ histogram: Histogram<UInt64>) -> String {
        "p50 \(histogram.valueAtPercentile(50)) ms   p99 \(histogram.valueAtPercentile(99)) ms   max \(histogram.max) ms"
    }
    let outputs = latency.notification == nil ? "outputs queued, the sink down" : "the sink delivering every output"
    var lines = [
        "latency at \(format(rate)) msg/s (\(messages) messages after a one-second warm-up, \(outputs)):",
        "  publish→commit        \(milliseconds(latency.commit)) (ms resolution)",
        "    warm-up, Herald's first second: \(milliseconds(latency.warmUpCommit))",
    ]
    if let notification = latency.notification {
        let ratio = Double(notification.valueAtPercentile(99)) / Double(max(1, latency.broker.valueAtPercentile(99)))
        lines.append("  publish→notification  \(microseconds(notification)); p99 \(format(ratio, 1))× the plain subscriber's")
    }
    if let empty = latency.outboxEmptySeconds {
        lines.append("  the outbox empty \(format(empty * 1000, 0)) ms after the last publish (every output delivered, badges and receipts "
                     + "too, then purged: delivered entries leave the outbox within 250 ms)")
    }
    lines.append("  baseline, publish→a plain C-client subscriber on the same broker: \(microseconds(latency.broker))")
    lines.append("  Herald's CPU: \(format(latency.cpuPerThousand, 3)) s/1000 messages, \(latency.kernel)")
    lines.append(machineLine(latency, messages: messages))
    if let commits = latency.commits { lines.append("  Herald's commits, warm-up included: \(commits.summary)") }
    return lines.joined(separator: "\n")
}
