import Foundation
import HeraldCore
import HeraldPostgres
import Logging
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
    /// Peak RssAnon (the process's own pages), sampled, where the phase samples it.
    var peakRssAnonMiB: Double?
    /// Where the CPU went: the broker, this bench, the consumer and the database server.
    var cpuSplit: CPUSplit?
    /// The PostgreSQL server's CPU seconds per 1000 messages, when the phase stored into PostgreSQL.
    var databaseCPUPerThousand: Double?
    /// Herald's commits in the phase, from its metrics.
    var commits: CommitFigures?
    /// The kernel's share of Herald's CPU and its read and write system calls per message.
    var kernel: String?
    /// With the sink delivering: the outputs still in the outbox when the last message was stored.
    var outputsQueuedAtLastCommit: Int?
    /// With the sink delivering: seconds from the start until the outbox was empty.
    var outboxEmptyAfterSeconds: Double?
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
    var meter = CPUSplitMeter(broker: broker)
    let started = ContinuousClock.now
    let drain = try ChildProcess(executable: "/usr/bin/mosquitto_sub", arguments: common + ["-C", "\(workload.messages)"],
                                 logPath: directory.path("sub-\(backlog).log"))
    if !backlog {
        try await eventually("mosquitto_sub to connect") { broker.log.contains(" as bench-sub ") }
        meter = CPUSplitMeter(broker: broker)
        try await publish(workload, port: broker.port)
    }
    _ = try await drain.waitForExit(timeout: .seconds(600))
    let elapsed = seconds(ContinuousClock.now - started)
    let split = meter.finish(messages: workload.messages, consumerSeconds: meter.reapedChildrenSeconds())
    return PhaseResult(rate: Double(workload.messages) / elapsed, cpuSplit: split)
}

/// Herald taking the load through to committed rows and queued outputs. Unless `sinkDelivers`, the
/// sink points at a port where nothing listens, so outputs stay queued and only intake is measured;
/// with it, the MQTT sink publishes every output to the broker meanwhile, as the shipped config runs,
/// and the phase also waits for the outbox to empty.
func heraldPhase(_ workload: Workload, backlog: Bool, sinkDelivers: Bool = false, stalledTail: Bool = false,
                 directory: TemporaryDirectory) async throws -> PhaseResult {
    let broker = try await MosquittoBroker()
    var configuration = try workload.configuration(port: broker.port, storePath: directory.path("bench-\(UUID().uuidString.prefix(8)).sqlite"),
                                                   sinkDelivers: sinkDelivers)
    configuration.storeURL = try await workload.postgres?.createDatabase()
    let name = "\(backlog)-\(sinkDelivers)-\(stalledTail)"
    let configPath = try directory.write("bench-\(name).yaml", configuration.yaml)
    var herald = try HeraldProcess(configPath: configPath, logPath: directory.path("herald-\(name).log"))
    try await herald.waitUntilConnected(connections: workload.connections(sinkDelivers: sinkDelivers))
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
    let store = try inspection(of: configuration)
    var publisher: Task<Void, any Error>?
    let started: ContinuousClock.Instant
    var before = ProcessStats.start
    var databaseBefore = 0.0
    let meter: CPUSplitMeter
    if backlog {
        herald.child.signal(SIGTERM)
        _ = try await herald.child.waitForExit()
        try await publish(workload, port: broker.port)  // queued in Herald's persistent session
        databaseBefore = workload.postgres?.cpuSeconds() ?? 0
        meter = CPUSplitMeter(broker: broker)
        started = .now
        herald = try HeraldProcess(configPath: configPath, logPath: directory.path("herald-\(name)-restart.log"))
    } else {
        before = ProcessStats(pid: herald.child.pid)
        databaseBefore = workload.postgres?.cpuSeconds() ?? 0
        meter = CPUSplitMeter(broker: broker)
        started = .now
        publisher = Task { try await publish(workload, port: broker.port) }
    }
    let memory = MemorySampler.start(pid: herald.child.pid)
    try await waitUntilCommitted(workload, by: [herald], store: { store })
    let elapsed = seconds(ContinuousClock.now - started)
    let after = ProcessStats(pid: herald.child.pid)
    let peaks = memory.finish()
    let heraldCPU = after.cpuSeconds - before.cpuSeconds
    let databaseCPU = (workload.postgres?.cpuSeconds()).map { $0 - databaseBefore }
    let split = meter.finish(messages: workload.messages, consumerSeconds: heraldCPU, databaseSeconds: databaseCPU)
    try await publisher?.value
    var commits = CommitFigures(adminPort: configuration.adminPort)
    commits?.runSeconds = elapsed
    var queuedAtLastCommit: Int?, emptyAfter: Double?
    if sinkDelivers {
        queuedAtLastCommit = try store.statistics().outbox
        try await eventually("the outbox to empty", timeout: .seconds(900), poll: .milliseconds(20)) {
            guard herald.child.isRunning else { throw TestKitError("herald exited:\n\(herald.child.output)") }
            return try store.statistics().outbox == 0
        }
        emptyAfter = seconds(ContinuousClock.now - started)
    }
    herald.child.signal(SIGTERM)
    _ = try await herald.child.waitForExit()
    return PhaseResult(rate: Double(workload.messages) / elapsed,
                       cpuPerThousand: heraldCPU / Double(workload.messages) * 1000,
                       peakRSSMiB: after.peakRSSMiB, peakRssAnonMiB: peaks.anonymous, cpuSplit: split,
                       databaseCPUPerThousand: databaseCPU.map { $0 / Double(workload.messages) * 1000 }, commits: commits,
                       kernel: after.kernelClause(since: before, messages: workload.messages),
                       outputsQueuedAtLastCommit: queuedAtLastCommit, outboxEmptyAfterSeconds: emptyAfter)
}

/// The store a phase's Herald writes to, opened for reading its figures: PostgreSQL when the
/// configuration names a URL, else the SQLite file.
func inspection(of configuration: TestConfiguration) throws -> any ChatStoreInspection {
    try configuration.storeURL.map {
        try PostgresChatStore(settings: PostgresStoreSettings(url: $0), logger: Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() })
    } ?? SQLiteChatStore(path: configuration.storePath, durability: .normal)
}
