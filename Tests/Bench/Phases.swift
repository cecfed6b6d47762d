import Foundation
import HeraldCore
import HeraldTestKit
import Histogram

#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// One benchmark phase's figures.
struct PhaseResult {
    var rate: Double
    var cpuPerThousand: Double?
    var peakRSSMiB: Double?
}

/// `mosquitto_sub -C N` at QoS 1: the C client's drain rate, live (subscribed while the publisher
/// sends) or from a backlog queued in its persistent session.
func mosquittoSubPhase(_ workload: Workload, backlog: Bool, directory: TemporaryDirectory) async throws -> PhaseResult {
    let broker = try await MosquittoBroker()
    let common = ["-h", "127.0.0.1", "-p", "\(broker.port)", "-q", "1", "-t", "chats/+/messages", "-i", "bench-sub", "-c"]
    if backlog {
        let create = try ChildProcess(executable: "/usr/bin/mosquitto_sub", arguments: common + ["-E"], logPath: directory.path("sub-create.log"))
        _ = try await create.waitForExit()
        try await publish(workload, port: broker.port)
    }
    let started = ContinuousClock.now
    let drain = try ChildProcess(executable: "/usr/bin/mosquitto_sub", arguments: common + ["-C", "\(workload.messages)"],
                                 logPath: directory.path("sub-\(backlog).log"))
    if !backlog {
        try await eventually("mosquitto_sub to connect") { broker.log.contains(" as bench-sub ") }
        try await publish(workload, port: broker.port)
    }
    _ = try await drain.waitForExit(timeout: .seconds(600))
    return PhaseResult(rate: Double(workload.messages) / seconds(ContinuousClock.now - started))
}

/// Herald taking the load through to committed rows and queued outputs. The sink points at a port
/// where nothing listens, so outputs stay queued and only intake is measured.
func heraldPhase(_ workload: Workload, backlog: Bool, stalledTail: Bool = false, directory: TemporaryDirectory) async throws -> PhaseResult {
    let broker = try await MosquittoBroker()
    var configuration = TestConfiguration(port: broker.port, storePath: directory.path("bench-\(UUID().uuidString.prefix(8)).sqlite"))
    configuration.durability = workload.durability
    configuration.cacheMiB = workload.cacheMiB
    configuration.sinkPort = try Loopback.freePort()
    configuration.sourceClientID = "herald-bench"
    let configPath = try directory.write("bench-\(backlog)-\(stalledTail).yaml", configuration.yaml)
    var herald = try HeraldProcess(configPath: configPath, logPath: directory.path("herald-\(backlog)-\(stalledTail).log"))
    try await herald.waitUntilConnected(connections: 1)  // the source; the sink has nowhere to connect
    var stalled: Int32?
    defer { if let stalled { close(stalled) } }
    if stalledTail {
        // A tail client asking for everything (outputs, bodies) that never reads a byte.
        try await eventually("the admin API to listen") { Loopback.isListening(port: configuration.adminPort) }
        stalled = try Loopback.connectAndSend(port: configuration.adminPort,
                                              request: "GET /v1/tail?outputs=1&show_body=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        try await eventually("the stalled tail client to attach") {
            (try? Loopback.get(port: configuration.adminPort, path: "/v1/status"))?.contains("\"tail_clients\":1") == true
        }
    }
    let store = try SQLiteChatStore(path: configuration.storePath, durability: .normal)
    var publisher: Task<Void, any Error>?
    let started: ContinuousClock.Instant
    var cpuBefore = 0.0
    if backlog {
        herald.child.signal(SIGTERM)
        _ = try await herald.child.waitForExit()
        try await publish(workload, port: broker.port)  // queued in Herald's persistent session
        started = .now
        herald = try HeraldProcess(configPath: configPath, logPath: directory.path("herald-backlog-restart.log"))
    } else {
        cpuBefore = ProcessStats(pid: herald.child.pid).cpuSeconds
        started = .now
        publisher = Task { try await publish(workload, port: broker.port) }
    }
    try await waitUntilCommitted(workload, store: { store })
    let elapsed = seconds(ContinuousClock.now - started)
    let after = ProcessStats(pid: herald.child.pid)
    try await publisher?.value
    herald.child.signal(SIGTERM)
    _ = try await herald.child.waitForExit()
    return PhaseResult(rate: Double(workload.messages) / elapsed,
                       cpuPerThousand: (after.cpuSeconds - cpuBefore) / Double(workload.messages) * 1000,
                       peakRSSMiB: after.peakRSSMiB)
}

/// Paced load at `rate` with a live sink: publish→commit latency from the store (ms resolution) and
/// publish→notification latency measured by a subscriber in this process (µs resolution).
func latencyPhase(_ workload: Workload, rate: Double, directory: TemporaryDirectory) async throws
    -> (commit: Histogram<UInt64>, notification: Histogram<UInt64>, broker: Histogram<UInt64>) {
    let broker = try await MosquittoBroker()
    var configuration = TestConfiguration(port: broker.port, storePath: directory.path("latency.sqlite"))
    configuration.durability = workload.durability
    configuration.cacheMiB = workload.cacheMiB
    let configPath = try directory.write("latency.yaml", configuration.yaml)
    let herald = try HeraldProcess(configPath: configPath, logPath: directory.path("herald-latency.log"))
    try await herald.waitUntilConnected(connections: 2)
    let samples = LatencySamples()
    let subscriber = try await TestMQTTClient(port: broker.port, subscriptions: ["users/+/notifications"]) { message in
        guard let range = message.text.range(of: "\"preview\":\"t=") else { return }
        let stamp = Int64(message.text[range.upperBound...].prefix { $0.isNumber }) ?? 0
        samples.add(nowMicros() - stamp)
    }
    // Baseline from the same run: a plain C-client subscriber on the input topics (publish→broker→client).
    let baselineSamples = LatencySamples()
    let baseline = try await TestMQTTClient(port: broker.port, subscriptions: ["chats/+/messages"]) { message in
        guard let range = message.text.range(of: "\"body\":\"t=") else { return }
        let stamp = Int64(message.text[range.upperBound...].prefix { $0.isNumber }) ?? 0
        baselineSamples.add(nowMicros() - stamp)
    }
    try await publish(workload, port: broker.port, ratePerSecond: rate)
    let store = try SQLiteChatStore(path: configuration.storePath, durability: .normal)
    try await waitUntilCommitted(workload, store: { store }, timeout: .seconds(30))
    try await eventually("notifications received", timeout: .seconds(60)) { samples.count >= workload.messages }
    try await subscriber.close()
    try await eventually("baseline subscriber received all", timeout: .seconds(60)) { baselineSamples.count >= workload.messages }
    try await baseline.close()
    herald.child.signal(SIGTERM)
    _ = try await herald.child.waitForExit()

    var commit = Histogram<UInt64>(highestTrackableValue: 3_600_000, numberOfSignificantValueDigits: .three)
    for latency in try store.messageLatenciesMilliseconds() { _ = commit.record(UInt64(max(0, latency))) }
    var notification = Histogram<UInt64>(highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)
    for value in samples.values { _ = notification.record(UInt64(max(0, value))) }
    var brokerPath = Histogram<UInt64>(highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)
    for value in baselineSamples.values { _ = brokerPath.record(UInt64(max(0, value))) }
    return (commit, notification, brokerPath)
}

/// Latency samples from the subscriber's network thread.
final class LatencySamples: Sendable {
    private let state = Mutex<[Int64]>([])
    func add(_ value: Int64) { state.withLock { $0.append(value) } }
    var count: Int { state.withLock { $0.count } }
    var values: [Int64] { state.withLock { $0 } }
}

/// The latency phase's lines, for the full report and `--latency-only` alike.
func latencyReport(_ latency: (commit: Histogram<UInt64>, notification: Histogram<UInt64>, broker: Histogram<UInt64>),
                   rate: Double, messages: Int) -> String {
    func microseconds(_ histogram: Histogram<UInt64>) -> String {
        "p50 \(format(Double(histogram.valueAtPercentile(50)) / 1000, 2)) ms   p99 \(format(Double(histogram.valueAtPercentile(99)) / 1000, 2)) ms   "
            + "max \(format(Double(histogram.max) / 1000, 2)) ms"
    }
    let commit = latency.commit
    return """
        latency at \(format(rate)) msg/s (\(messages) messages):
          publish→commit        p50 \(commit.valueAtPercentile(50)) ms   p99 \(commit.valueAtPercentile(99)) ms   max \(commit.max) ms (target p99 ≤ 20 ms; ms resolution)
          publish→notification  \(microseconds(latency.notification))
          baseline, publish→a plain C-client subscriber on the same broker: \(microseconds(latency.broker))
        """
}
