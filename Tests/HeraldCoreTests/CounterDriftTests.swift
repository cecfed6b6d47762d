import Foundation
import GRDB
@testable import HeraldCore
import HeraldPluginAPI
import HeraldPostgres
import HeraldTestKit
import Testing

/// Counters that drifted from the stored messages (written by hand here, as a restored backup or an edit
/// would leave them) are found by the recount and set back by the router, with the users' badges queued.
@Suite("Unread counters repaired from a recount, SQLite and PostgreSQL")
struct CounterDriftTests {
    @Test(arguments: StoreBackend.allCases) func driftedCountersAreSetToTheRecountAndTheirUsersGetBadges(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            // c1: alice's m1 and m2 to bob, who read m1. c2: carol's x1 to dave.
            try harness.apply(message("c1", "m1", from: "alice", to: ["bob"], at: 1000),
                              message("c1", "m2", from: "alice", to: ["bob"], at: 2000),
                              message("c2", "x1", from: "carol", to: ["dave"], at: 1500),
                              read("bob", "c1", upTo: "m1"))
            try harness.drain()
        }
        #expect(try drift(in: harness.store).isEmpty, "the router keeps every counter equal to a recount")

        try await harness.setStoredUnread(user: "bob", chat: "c1", to: 5)      // should be 1
        try await harness.setStoredUnread(user: "erin", chat: "c1", to: 2)     // not a member: 0
        try await harness.setStoredUnread(user: "dave", chat: "c2", to: 0)     // should be 1
        let found = try drift(in: harness.store)
        #expect(found == [CounterDrift(user: "bob", chat: "c1", stored: 5, recounted: 1),
                          CounterDrift(user: "dave", chat: "c2", stored: 0, recounted: 1),
                          CounterDrift(user: "erin", chat: "c1", stored: 2, recounted: 0)])

        try await offCooperativePool {
            let repairs = try harness.router.recountUnread(found.map { ($0.user, $0.chat) })
            #expect(repairs == found)
            #expect(try harness.drain().compactMap(\.badgeUpdate) == [
                BadgeUpdate(recipient: "bob", unread: 1, chats: ["c1": 1]),
                BadgeUpdate(recipient: "dave", unread: 1, chats: ["c2": 1]),
                BadgeUpdate(recipient: "erin", unread: 0, chats: [:]),
            ])
            #expect(try harness.badge("bob") == BadgeUpdate(recipient: "bob", unread: 1, chats: ["c1": 1]))
            // Repeating it, or recounting counters that were right, changes nothing and queues nothing.
            #expect(try harness.router.recountUnread(found.map { ($0.user, $0.chat) } + [("alice", "c1")]).isEmpty)
            #expect(try harness.drain().isEmpty)
        }
        #expect(try drift(in: harness.store).isEmpty)
    }

    @Test(arguments: StoreBackend.allCases) func aDriftedCounterTakesDeltasUntilTheRecountSetsIt(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        _ = try await offCooperativePool { try harness.apply(message("c1", "m1", from: "alice", to: ["bob"], at: 1000)) }
        try await harness.setStoredUnread(user: "bob", chat: "c1", to: 7)
        try await offCooperativePool {
            try harness.apply(message("c1", "m2", from: "alice", to: ["bob"], at: 2000))
            #expect(try harness.badge("bob").unread == 8)
            #expect(try harness.router.recountUnread([("bob", "c1")]) == [CounterDrift(user: "bob", chat: "c1", stored: 8, recounted: 2)])
            try harness.apply(message("c1", "m3", from: "alice", to: ["bob"], at: 3000))
            #expect(try harness.badge("bob") == BadgeUpdate(recipient: "bob", unread: 3, chats: ["c1": 3]))
        }
        #expect(try drift(in: harness.store).isEmpty)
    }

    /// The counters that differ from a recount, as the CLI finds them, after checking that the one-pass
    /// query agrees with the full listing.
    private func drift(in store: any ChatStoreInspection) throws -> [CounterDrift] {
        let all = try store.unreadAgainstRecount()
        let drift = try store.unreadDrift()
        #expect(drift.counters == all.count && drift.users == Set(all.map(\.user)).count)
        #expect(drift.differing == all.filter { $0.stored != $0.recounted }.sorted { ($0.user, $0.chat) < ($1.user, $1.chat) })
        return drift.differing
    }
}

extension RouterHarness {
    /// Writes an unread counter behind the router's back, as a restored backup or an edit by hand would.
    func setStoredUnread(user: UserID, chat: ChatID, to count: Int) async throws {
        if let store = store as? SQLiteChatStore {
            try await store.pool.write { db in
                try db.execute(sql: "DELETE FROM unread WHERE user = ? AND chat = ?", arguments: [user.rawValue, chat.rawValue])
                if count != 0 {
                    try db.execute(sql: "INSERT INTO unread(user, chat, count) VALUES (?, ?, ?)", arguments: [user.rawValue, chat.rawValue, count])
                }
            }
        } else if let store = store as? PostgresChatStore {
            let cluster = try await PostgresCluster.shared()
            let delete = "DELETE FROM unread_counters WHERE user_id = '\(user.rawValue)' AND chat = '\(chat.rawValue)';"
            let insert = count == 0 ? "" : "INSERT INTO unread_counters(user_id, chat, unread) VALUES ('\(user.rawValue)', '\(chat.rawValue)', \(count));"
            try await cluster.psql(database: store.settings.database, delete + insert)
        }
    }
}
