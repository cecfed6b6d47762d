import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Logging
import Metrics
import Synchronization

/// A SQLite store behind ``OutboxRecordingStore``, a router that queues notifications for each of
/// `sinks`, and the dispatcher of the sink `push` (a ``ConfirmingSink``); the other sinks stay down.
struct OutboxFixture {
    let directory: TemporaryDirectory
    let store: OutboxRecordingStore
    let router: EventRouter
    let sink = ConfirmingSink(name: "push")
    let dispatcher: OutboxDispatcher

    init(sinks: [String] = ["push"], batchSize: Int = 256, purgeInterval: Duration = .milliseconds(250)) throws {
        directory = try TemporaryDirectory()
        store = OutboxRecordingStore(try SQLiteChatStore(path: directory.path("store.sqlite"), durability: .normal))
        let signal = OutboxSignal()
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        router = EventRouter(store: store, policy: RouterPolicy(), routing: OutputRouting(sinkAccepts: sinks.map { ($0, [.notification]) }),
                             clock: ManualClock(), metrics: RouterMetrics(factory: NOOPMetricsHandler.instance), signal: signal, logger: logger)
        dispatcher = OutboxDispatcher(sink: sink, store: store, signal: signal, logger: logger, metrics: NOOPMetricsHandler.instance,
                                      batchSize: batchSize, purgeInterval: purgeInterval)
    }

    /// Commits one message from alice to bob in chat `c<index>` for each index.
    func send(_ indices: ClosedRange<Int>) async throws {
        let records = indices.map { index in
            SourceRecord(provenance: Provenance(adapter: "t", origin: "t", rawSize: 0, receivedAt: Timestamp(milliseconds: 1)),
                         outcome: .event(.messageReceived(MessageReceived(
                             chat: ChatID("c\(index)"), id: MessageID("m\(index)"), sender: "alice", recipients: ["bob"],
                             body: "hi", sentAt: Timestamp(milliseconds: Int64(index))))), raw: [])
        }
        let router = router
        try await offCooperativePool { _ = try router.commit(records) }
    }
}

/// A sink that confirms every output and records their sequences.
final class ConfirmingSink: SinkAdapter {
    let name: String
    let accepts: Set<OutputKind> = [.notification]
    private let state = Mutex<[Int64]>([])

    init(name: String) { self.name = name }

    var delivered: [Int64] { state.withLock { $0 } }

    func run(context: SinkContext) async throws {}

    func deliver(_ batch: [OutboxEnvelope]) async throws(SinkError) -> Int {
        state.withLock { $0 += batch.map(\.sequence) }
        return batch.count
    }
}

/// A real store that records where each outbox read started and counts the purges.
final class OutboxRecordingStore: ChatStore {
    private let base: SQLiteChatStore
    private let starts = Mutex<[(sink: String, after: Int64)]>([])
    private let removals = Mutex(0)

    init(_ base: SQLiteChatStore) { self.base = base }

    func reads(sink: String) -> [Int64] { starts.withLock { $0.filter { $0.sink == sink }.map(\.after) } }

    /// How many times delivered entries were removed.
    var purges: Int { removals.withLock { $0 } }

    func pendingOutputs(sink: String, after: Int64, limit: Int) throws -> [OutboxEnvelope] {
        starts.withLock { $0.append((sink, after)) }
        return try base.pendingOutputs(sink: sink, after: after, limit: limit)
    }

    var outboxFollowsCommitOrder: Bool { base.outboxFollowsCommitOrder }
    func write<T>(_ body: (any ChatTransaction) throws -> T) throws -> T { try base.write(body) }
    func badge(for user: UserID) throws -> BadgeUpdate { try base.badge(for: user) }
    func removeOutputs(sink: String, delivered: [Int64]) throws {
        removals.withLock { $0 += 1 }
        try base.removeOutputs(sink: sink, delivered: delivered)
    }
    func recordFailedAttempt(sink: String, sequences: [Int64]) throws { try base.recordFailedAttempt(sink: sink, sequences: sequences) }
    func outboxDepth() throws -> [String: Int] { try base.outboxDepth() }
    func openDeadLetterCount() throws -> Int { try base.openDeadLetterCount() }
    func deadLetters(limit: Int, includeReplayed: Bool) throws -> [DeadLetter] { try base.deadLetters(limit: limit, includeReplayed: includeReplayed) }
    func markReplayed(deadLetter id: Int64, at time: Timestamp) throws { try base.markReplayed(deadLetter: id, at: time) }
    func purgeDeadLetters(_ selection: DeadLetterSelection, limit: Int) throws -> Int { try base.purgeDeadLetters(selection, limit: limit) }
    func deadLetterCount(_ selection: DeadLetterSelection) throws -> Int { try base.deadLetterCount(selection) }
    func statistics() throws -> StoreStatistics { try base.statistics() }
    func checkpoint(source: String, key: String) throws -> String? { try base.checkpoint(source: source, key: key) }
    func deadLetterOutput(_ envelope: OutboxEnvelope, sink: String, rejection: Rejection, at time: Timestamp) throws {
        try base.deadLetterOutput(envelope, sink: sink, rejection: rejection, at: time)
    }
}
