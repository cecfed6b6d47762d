import Foundation
import GRDB
@testable import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Metrics
import Testing

/// `statistics()` reads counters kept with each write; these check them against counting the tables.
@Suite("Store row counters")
struct StoreCounterTests {
    private func message(_ id: String, chat: String = "c1", from: String = "alice") -> SourceRecord {
        let event = ChatEvent.messageReceived(MessageReceived(chat: ChatID(chat), id: MessageID(id), sender: UserID(from),
                                                              recipients: ["bob"], body: "hi", sentAt: Timestamp(milliseconds: 1_000)))
        return SourceRecord(provenance: Provenance(adapter: "test", origin: "t", rawSize: 10, receivedAt: Timestamp(milliseconds: 1_000)),
                            outcome: .event(event), raw: [])
    }

    private func router(_ store: SQLiteChatStore) -> EventRouter {
        EventRouter(store: store, policy: RouterPolicy(),
                    routing: OutputRouting(sinkAccepts: [("push", Set(OutputKind.allCases)), ("hooks", [.notification])]),
                    clock: SystemClock(), metrics: RouterMetrics(factory: NOOPMetricsHandler.instance), signal: OutboxSignal(),
                    logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
    }

    @Test("messages, duplicates, dead letters, delivery and dead-lettered outputs keep the counters equal to a count")
    func countersFollowEveryWrite() throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteChatStore(path: directory.path("store.sqlite"))
        let router = router(store)
        let garbage = SourceRecord(provenance: Provenance(adapter: "test", origin: "t", rawSize: 3, receivedAt: Timestamp(milliseconds: 1)),
                                   outcome: .rejected(Rejection(.malformedJSON, "not JSON")), raw: Array("bad".utf8))
        _ = try router.commit([message("m1"), message("m2"), message("m1"), garbage])
        _ = try router.commit([message("m3", chat: "c2")])

        let afterIngest = try store.statistics()
        #expect(afterIngest.messages == 3)
        #expect(afterIngest.deadLetters == 1)
        #expect(afterIngest.outbox > 0)
        #expect(afterIngest == (try store.recountStatistics()))
        // Push: a notification per message and one badge per commit for bob; hooks: the notifications.
        #expect(try store.outboxDepth() == ["push": 5, "hooks": 3])

        // The push sink delivers its first three; the hooks sink dead-letters one output.
        let push = try store.pendingOutputs(sink: "push", after: 0, limit: 3)
        try store.removeOutputs(sink: "push", delivered: push.map(\.sequence))
        let hooks = try #require(try store.pendingOutputs(sink: "hooks", after: 0, limit: 1).first)
        try store.deadLetterOutput(hooks, sink: "hooks", rejection: Rejection(.invalidField, "refused"), at: Timestamp(milliseconds: 2))
        #expect(try store.outboxDepth() == ["push": 2, "hooks": 2])
        #expect(try store.statistics() == (try store.recountStatistics()))
        #expect(try store.statistics().deadLetters == 2)
    }

    @Test("a store from before the counters gets them from its rows when it is opened")
    func migrationCountsExistingRows() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("old.sqlite")
        // The schema as it was before the counters, with a message, a dead letter and two outputs.
        let old = try DatabaseQueue(path: path)
        try SQLiteChatStore.migrator.migrate(old, upTo: "v2-source-checkpoints")
        try old.write { db in
            try db.execute(sql: "INSERT INTO messages(chat, id, sender, body, sent_at, received_at) VALUES ('c1', 'm1', 'alice', 'hi', 1, 1)")
            try db.execute(sql: """
                INSERT INTO dead_letters(adapter, origin, reason, detail, raw, raw_size, received_at) VALUES ('a', 'o', 'malformed_json', 'd', x'00', 1, 1)
                """)
            for sink in ["push", "push", "hooks"] {
                try db.execute(sql: "INSERT INTO outbox(sink, recipient, kind, payload, created_at) VALUES (?, 'bob', 'badge', x'7b7d', 1)",
                               arguments: [sink])
            }
        }
        try old.close()

        let store = try SQLiteChatStore(path: path)
        #expect(try store.statistics() == StoreStatistics(messages: 1, deadLetters: 1, outbox: 3))
        #expect(try store.outboxDepth() == ["push": 2, "hooks": 1])
    }
}
