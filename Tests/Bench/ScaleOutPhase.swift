import Foundation
import HeraldCore
import HeraldPostgres
import HeraldTestKit
import Logging

/// Figures of N instances sharing one PostgreSQL store behind an MQTT 5 shared subscription.
struct ScaleOutResult {
    var instances: Int
    var rate: Double
    /// CPU seconds per 1000 messages, all instances together.
    var cpuPerThousand: Double
    /// Each instance's share of the CPU, seconds per 1000 messages of the whole workload.
    var cpuPerThousandByInstance: [Double]
    /// The PostgreSQL server's CPU seconds per 1000 messages.
    var databaseCPUPerThousand: Double
}

/// `instances` gateways take the live load through a shared subscription into one PostgreSQL
/// database (fsync on); timed from the first publish until the last message is committed.
func scaleOutPhase(_ workload: Workload, instances: Int, directory: TemporaryDirectory) async throws -> ScaleOutResult {
    guard let postgres = workload.postgres else { throw TestKitError("the scale-out phase needs --store postgres") }
    let broker = try await MosquittoBroker()
    let url = try await postgres.createDatabase()
    var processes: [HeraldProcess] = []
    var storeConfiguration: TestConfiguration?
    for index in 0..<instances {
        var configuration = try workload.configuration(port: broker.port, storePath: directory.path("unused.sqlite"))
        configuration.storeURL = url
        configuration.sourceClientID = "bench-ingest-\(index)"
        configuration.sourceExtra += "\n    protocol: 5\n    share_group: herald"
        configuration.topLevelExtra = "instance:\n  id: bench-\(index)"
        let path = try directory.write("scale-\(instances)-\(index).yaml", configuration.yaml)
        let process = try HeraldProcess(configPath: path, logPath: directory.path("scale-\(instances)-\(index).log"))
        try await process.waitUntilConnected(connections: 1)
        processes.append(process)
        storeConfiguration = configuration
    }
    let store = try storeConfiguration.map(inspection(of:))
    let cpuBefore = processes.map { ProcessStats(pid: $0.child.pid).cpuSeconds }
    let databaseBefore = postgres.cpuSeconds()
    let started = ContinuousClock.now
    let publisher = Task { try await publish(workload, port: broker.port) }
    try await waitUntilCommitted(workload, by: processes, store: { store })
    let elapsed = seconds(ContinuousClock.now - started)
    let cpu = zip(processes, cpuBefore).map { ProcessStats(pid: $0.child.pid).cpuSeconds - $1 }
    let databaseCPU = postgres.cpuSeconds() - databaseBefore
    try await publisher.value
    for process in processes {
        process.child.signal(SIGTERM)
        _ = try await process.child.waitForExit()
    }
    let perThousand = { (seconds: Double) in seconds / Double(workload.messages) * 1000 }
    return ScaleOutResult(instances: instances, rate: Double(workload.messages) / elapsed, cpuPerThousand: perThousand(cpu.reduce(0, +)),
                          cpuPerThousandByInstance: cpu.map(perThousand), databaseCPUPerThousand: perThousand(databaseCPU))
}

extension ScaleOutResult {
    /// One line of the report, beside mosquitto_sub's live rate on the same kind of broker.
    func report(baseline: Double) -> String {
        "\(instances) instance\(instances == 1 ? " " : "s") \(format(rate).leftPad(7)) msg/s   \(format(rate / baseline, 2)) of mosquitto_sub live   "
            + "Herald CPU \(format(cpuPerThousand, 3)) s/1000 (per instance \(cpuPerThousandByInstance.map { format($0, 3) }.joined(separator: ", ")))   "
            + "PostgreSQL CPU \(format(databaseCPUPerThousand, 3)) s/1000"
    }
}
