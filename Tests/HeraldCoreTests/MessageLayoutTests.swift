import Foundation
import GRDB
@testable import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Metrics
import Testing

/// Messages are stored in arrival order (migration v4), a commit's messages in the order of the
/// messages' indexes; these check the migration of an older store, the order within a commit and the
/// status query that relies on the order.
@Suite("Message layout")
struct MessageLayoutTests {
    @Test("a store from before v4 keeps its messages, and they stay idempotent and counted in order")
    func migrationKeepsMessages() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("old.sqlite")
        let old = try DatabaseQueue(path: path)
        try SQLiteChatStore.migrator.migrate(old, upTo: "v3-store-counters")
        try old.write { db in
            // Chat c1: alice's m1 and m2 for bob, who has read m1. Chat c2: one message.
            for (chat, id, sender, sentAt) in [("c1", "m2", "alice", 2_000), ("c1", "m1", "alice", 1_000), ("c2", "x1", "carol", 1_500)] {
                try db.execute(sql: "INSERT INTO messages(chat, id, sender, body, sent_at, received_at) VALUES (?, ?, ?, 'hi', ?, ?)",
                               arguments: [chat, id, sender, sentAt, sentAt])
            }
            try db.execute(sql: "INSERT INTO chats(chat, declared) VALUES ('c1', 0)")
            try db.execute(sql: "INSERT INTO chat_members(chat, user, inferred) VALUES ('c1', 'alice', 1), ('c1', 'bob', 1)")
            try db.execute(sql: "INSERT INTO read_positions(user, chat, sent_at, message_id) VALUES ('bob', 'c1', 1000, 'm1')")
            try db.execute(sql: "INSERT INTO unread(user, chat, count) VALUES ('bob', 'c1', 1)")
            try db.execute(sql: "UPDATE store_counters SET value = 3 WHERE name = 'messages'")
        }
        try old.close()

        var announced: [String] = []
        let store = try SQLiteChatStore(path: path, durability: .normal) { announced = $0 }
        #expect(announced == ["v4-messages-in-arrival-order", "v5-outbox-packs"])
        let layout = try store.pool.read { db in
            try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'messages'") ?? ""
        }
        #expect(!layout.contains("WITHOUT ROWID"))
        #expect(try store.modelSnapshot().filter { $0.hasPrefix("m|") }.count == 3)
        #expect(try store.containsMessage(chat: "c1", id: "m2"))
        #expect(try store.recentMessages(chat: "c1", limit: 5).map(\.id) == ["m2", "m1"])
        #expect(try store.unreadAgainstRecount().allSatisfy { $0.stored == $0.recounted })

        // A redelivery of a migrated message is a duplicate; a new one counts for bob.
        let router = EventRouter(store: store, policy: RouterPolicy(), routing: OutputRouting(sinkAccepts: []), clock: ManualClock(),
                                 metrics: RouterMetrics(factory: NOOPMetricsHandler.instance), signal: OutboxSignal(),
                                 logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        func record(_ event: ChatEvent) -> SourceRecord {
            SourceRecord(provenance: Provenance(adapter: "test", origin: "t", rawSize: 0, receivedAt: Timestamp(milliseconds: 5_000)),
                         outcome: .event(event), raw: [])
        }
        #expect(try router.commit([record(message("c1", "m1", from: "alice", at: 1_000))]).duplicates == 1)
        #expect(try router.commit([record(message("c1", "m3", from: "alice", at: 3_000))]).applied == 1)
        #expect(try store.badge(for: "bob").unread == 2)
        #expect(try store.unreadAgainstRecount().allSatisfy { $0.stored == $0.recounted })
        #expect(try store.statistics() == (try store.recountStatistics()))
    }

    @Test("the busiest chats count only messages received since the given time, newest first when capped")
    func busiestChatsSince() async throws {
        let harness = try await RouterHarness()
        try harness.apply(message("old", "o1", from: "alice"), message("old", "o2", from: "alice"), message("old", "o3", from: "alice"))
        harness.clock.advance(milliseconds: 70_000)
        let since = harness.clock.now().adding(milliseconds: -60_000)
        try harness.apply(message("b", "b1", from: "alice"), message("a", "a1", from: "alice"), message("b", "b2", from: "alice"))
        harness.clock.advance(milliseconds: 1_000)
        try harness.apply(message("c", "c1", from: "alice"))

        let top = try harness.sqlite.busiestChats(since: since, limit: 5)
        #expect(top.map(\.chat) == ["b", "a", "c"])
        #expect(top.map(\.count) == [2, 1, 1])
        #expect(try harness.sqlite.busiestChats(since: since, limit: 1).map(\.chat) == ["b"])
        // Capped to the newest two messages: b2 and c1.
        #expect(try harness.sqlite.busiestChats(since: since, limit: 5, scanLimit: 2).map(\.chat) == ["b", "c"])
        // Nothing since a time after the last message; everything since the start.
        #expect(try harness.sqlite.busiestChats(since: harness.clock.now().adding(milliseconds: 1), limit: 5).isEmpty)
        #expect(try harness.sqlite.busiestChats(since: Timestamp(milliseconds: 0), limit: 1).first?.count == 3)
    }

    @Test("a new store and an up-to-date one announce no migration")
    func noMigrationAnnounced() throws {
        let directory = try TemporaryDirectory()
        var announced: [[String]] = []
        _ = try SQLiteChatStore(path: directory.path("new.sqlite")) { announced.append($0) }
        _ = try SQLiteChatStore(path: directory.path("new.sqlite")) { announced.append($0) }
        #expect(announced.isEmpty)
    }

    @Test("a commit's messages go in by (chat, sent_at, id), the indexes' order; commits stay in arrival order")
    func commitInIndexOrder() async throws {
        let harness = try await RouterHarness()
        try harness.apply(message("c2", "x", from: "alice", at: 3_000), message("c1", "b", from: "bob", at: 2_000),
                          message("c1", "a", from: "alice", at: 2_000), message("c1", "z", from: "bob", at: 1_000))
        try harness.apply(message("c0", "late", from: "carol", at: 500))
        let order = try await harness.sqlite.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT chat, id FROM messages ORDER BY rowid").map { "\($0[0] as String)/\($0[1] as String)" }
        }
        #expect(order == ["c1/z", "c1/a", "c1/b", "c2/x", "c0/late"])
    }

    @Test("the busiest chats of an empty store are none")
    func busiestChatsOfEmptyStore() async throws {
        let harness = try await RouterHarness()
        #expect(try harness.sqlite.busiestChats(since: Timestamp(milliseconds: 0), limit: 5).isEmpty)
    }
}
