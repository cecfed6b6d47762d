import Foundation
import HeraldCore
import HeraldPostgres
import HeraldPluginAPI
import HeraldTestKit
import Metrics

/// The store's ceiling: the same workload normalised and committed in-process in batches of `workload.batch`,
/// with no broker. Separates Herald's own cost from the network path.
func routerPhase(_ workload: Workload, directory: TemporaryDirectory) async throws -> RouterPhaseResult {
    let databaseURL = try await workload.postgres?.createDatabase()
    let outcome = Result { try measureRouter(workload, directory: directory, databaseURL: databaseURL) }
    // The phases after this one start from a checkpointed cluster, not in the checkpoint this phase's writes
    // bring on, and without its data.
    if let postgres = workload.postgres, let database = databaseURL?.split(separator: "/").last {
        _ = try? await postgres.psql(database: "postgres", "DROP DATABASE \(database) WITH (FORCE)")
        _ = try? await postgres.psql(database: "postgres", "CHECKPOINT")
    }
    return try outcome.get()
}

/// Normalises and commits the workload into a new store: in PostgreSQL's database `databaseURL`, or else SQLite.
private func measureRouter(_ workload: Workload, directory: TemporaryDirectory, databaseURL: String?) throws -> RouterPhaseResult {
    let store: any ChatStore
    if let databaseURL {
        store = try PostgresChatStore(settings: PostgresStoreSettings(url: databaseURL), logger: Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() })
    } else {
        store = try SQLiteChatStore(path: directory.path("router-only.sqlite"), durability: SQLiteChatStore.Durability(rawValue: workload.durability) ?? .full,
                                    cacheMiB: workload.cacheMiB ?? SQLiteChatStore.defaultCacheMiB)
    }
    let router = EventRouter(store: store, policy: RouterPolicy(), routing: OutputRouting(sinkAccepts: [("push", Set(OutputKind.allCases))]),
                             clock: SystemClock(), metrics: RouterMetrics(factory: NOOPMetricsHandler.instance), signal: OutboxSignal(),
                             logger: Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() })
    let decoder = EventPayloadDecoder()
    let payloads = (0..<workload.messages).map { Array(workload.payload($0, sentAtMicros: nowMicros()).utf8) }
    let normaliseStart = ContinuousClock.now
    let records = payloads.enumerated().map { index, payload -> SourceRecord in
        let provenance = Provenance(adapter: "bench", origin: workload.topic(index), rawSize: payload.count, receivedAt: Timestamp(milliseconds: 0))
        switch decoder.decode(payload, as: .messageReceived, bindings: PayloadBindings(chat: ChatID("c\(index % workload.chats)")),
                              receivedAt: provenance.receivedAt) {
        case .success(let event): return SourceRecord(provenance: provenance, outcome: .event(event), raw: [])
        case .failure(let rejection): return SourceRecord(provenance: provenance, outcome: .rejected(rejection), raw: payload)
        }
    }
    let normaliseSeconds = seconds(ContinuousClock.now - normaliseStart)
    let commitStart = ContinuousClock.now
    let cpuStart = processCPUSeconds(), databaseStart = workload.postgres?.cpuSeconds()
    for start in stride(from: 0, to: records.count, by: workload.batch) {
        _ = try router.commit(Array(records[start..<min(start + workload.batch, records.count)]))
    }
    let commitSeconds = seconds(ContinuousClock.now - commitStart)
    let cpu = processCPUSeconds() - cpuStart
    let databaseCPU = databaseStart.flatMap { start in workload.postgres.map { $0.cpuSeconds() - start } }
    let perThousand = 1000 / Double(workload.messages)
    return RouterPhaseResult(normalise: Double(workload.messages) / normaliseSeconds, commit: Double(workload.messages) / commitSeconds,
                             commitCPUPerThousand: cpu * perThousand, databaseCPUPerThousand: databaseCPU.map { $0 * perThousand })
}

/// What the in-process phase measured.
struct RouterPhaseResult {
    /// Payloads normalised per second.
    var normalise: Double
    /// Messages routed and committed per second.
    var commit: Double
    /// This process's CPU seconds per 1,000 messages routed and committed.
    var commitCPUPerThousand: Double
    /// The PostgreSQL server's CPU seconds per 1,000 messages, when the phase stores into PostgreSQL.
    var databaseCPUPerThousand: Double?
}

/// CPU seconds this process has used (user + system); unlike wall time, not inflated by a busy host.
func processCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
