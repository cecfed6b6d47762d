import Foundation
import HeraldCore
import HeraldTestKit

#if canImport(Glibc)
import Glibc
#endif

/// How fast Herald empties its outbox after a sink outage: the outputs of `workload` are queued while
/// the MQTT sink points where nothing listens, then Herald restarts with the sink on the broker and
/// delivers them all (QoS 1, each confirmed by a PUBACK before it leaves the outbox).
struct SinkDrainResult {
    /// Outputs delivered.
    var outputs: Int
    /// Outputs per second, from the restart until the outbox is empty.
    var rate: Double
    /// Herald's CPU seconds per 1,000 outputs over the same span.
    var cpuPerThousand: Double

    var report: String {
        "sink drain: \(outputs) queued outputs published to the broker after an outage at \(format(rate)) outputs/s, "
            + "CPU \(format(cpuPerThousand, 3)) s/1000 outputs"
    }
}

func sinkDrainPhase(_ workload: Workload, directory: TemporaryDirectory) async throws -> SinkDrainResult {
    let broker = try await MosquittoBroker()
    var configuration = try workload.configuration(port: broker.port, storePath: directory.path("drain.sqlite"))
    let downPath = try directory.write("drain-down.yaml", configuration.yaml)
    let down = try HeraldProcess(configPath: downPath, logPath: directory.path("herald-drain-down.log"))
    try await down.waitUntilConnected(connections: 1)
    try await publish(workload, port: broker.port)
    let store = try SQLiteChatStore(path: configuration.storePath, durability: .normal)
    try await waitUntilCommitted(workload, by: [down], store: { store })
    down.child.signal(SIGTERM)
    _ = try await down.child.waitForExit()
    let outputs = try store.outboxDepth().values.reduce(0, +)

    configuration.sinkPort = broker.port
    let upPath = try directory.write("drain-up.yaml", configuration.yaml)
    let started = ContinuousClock.now
    let up = try HeraldProcess(configPath: upPath, logPath: directory.path("herald-drain-up.log"))
    try await eventually("the outbox to drain", timeout: .seconds(900), poll: .milliseconds(20)) {
        guard up.child.isRunning else { throw TestKitError("herald exited:\n\(up.child.output)") }
        return try store.outboxDepth().values.reduce(0, +) == 0
    }
    let elapsed = seconds(ContinuousClock.now - started)
    let cpu = ProcessStats(pid: up.child.pid).cpuSeconds
    up.child.signal(SIGTERM)
    _ = try await up.child.waitForExit()
    return SinkDrainResult(outputs: outputs, rate: Double(outputs) / elapsed,
                           cpuPerThousand: cpu / Double(max(outputs, 1)) * 1000)
}
