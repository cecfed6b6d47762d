import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Logging
import Metrics
import Synchronization
import Testing

/// A SQLite outbox commits in sequence order, so a dispatcher reads on from where it was: while another
/// sink is down and its entries pile up, this sink's reads and purges pass over them once, not on every
/// read. (PostgreSQL keys the outbox by sink instead; its plan is checked in the store's own suite.)
@Suite("Outbox dispatcher position")
struct OutboxPositionTests {
    @Test func withOneWriterADispatcherReadsOnAndLeavesTheOtherSinksEntries() async throws {
        let directory = try TemporaryDirectory()
        let store = ReadRecordingStore(try SQLiteChatStore(path: directory.path("store.sqlite"), durability: .normal))
        let signal = OutboxSignal()
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let router = EventRouter(store: store, policy: RouterPolicy(),
                                 routing: OutputRouting(sinkAccepts: [("down", [.notification]), ("push", [.notification])]),
                                 clock: ManualClock(), metrics: RouterMetrics(factory: NOOPMetricsHandler.instance), signal: signal,
                                 logger: logger)
        let sink = ConfirmingSink(name: "push")
        let dispatcher = OutboxDispatcher(sink: sink, store: store, signal: signal, logger: logger,
                                          metrics: NOOPMetricsHandler.instance, batchSize: 4)
        let running = Task { try await dispatcher.run() }
        defer { running.cancel() }

        @Sendable func send(_ range: ClosedRange<Int>) throws {
            let records = range.map { index in
                SourceRecord(provenance: Provenance(adapter: "t", origin: "t", rawSize: 0, receivedAt: Timestamp(milliseconds: 1)),
                             outcome: .event(.messageReceived(MessageReceived(
                                 chat: ChatID("c\(index)"), id: MessageID("m\(index)"), sender: "alice", recipients: ["bob"],
                                 body: "hi", sentAt: Timestamp(milliseconds: Int64(index))))), raw: [])
            }
            _ = try router.commit(records)
        }
        try await offCooperativePool { try send(1...10) }
        try await eventually("the first ten notifications to be delivered") { sink.delivered.count == 10 }
        try await eventually("the dispatcher to run dry and purge") { try store.outboxDepth()["push"] == nil }
        let firstRound = sink.delivered
        let lastDelivered = try #require(firstRound.last)
        try await offCooperativePool { try send(11...20) }
        try await eventually("the next ten to be delivered") { sink.delivered.count == 20 }
        try await eventually("the dispatcher to purge them") { try store.outboxDepth()["push"] == nil }

        // The reads never go back: none starts from the beginning again once entries were delivered.
        let reads = store.reads(sink: "push")
        #expect(zip(reads, reads.dropFirst()).allSatisfy { $0 <= $1 }, "reads after: \(reads)")
        #expect(reads.contains { $0 >= lastDelivered }, "reads after: \(reads)")
        // The purges removed this sink's entries only.
        #expect(try store.outboxDepth() == ["down": 20])
    }
}

/// A sink that confirms every output and records their sequences.
private final class ConfirmingSink: SinkAdapter {
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

/// A real store that records where each outbox read started.
private final class ReadRecordingStore: ChatStore {
    private let base: SQLiteChatStore
    private let starts = Mutex<[(sink: String, after: Int64)]>([])

    init(_ base: SQLiteChatStore) { self.base = base }

    func reads(sink: String) -> [Int64] { starts.withLock { $0.filter { $0.sink == sink }.map(\.after) } }

    func pendingOutputs(sink: String, after: Int64, limit: Int) throws -> [OutboxEnvelope] {
        starts.withLock { $0.append((sink, after)) }
        return try base.pendingOutputs(sink: sink, after: after, limit: limit)
    }

    var outboxFollowsCommitOrder: Bool { base.outboxFollowsCommitOrder }
    func write<T>(_ body: (any ChatTransaction) throws -> T) throws -> T { try base.write(body) }
    func badge(for user: UserID) throws -> BadgeUpdate { try base.badge(for: user) }
    func removeOutputs(sink: String, delivered: [Int64]) throws { try base.removeOutputs(sink: sink, delivered: delivered) }
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
