import Foundation
import GRDB
import HeraldCore
import HeraldTestKit
import Testing

/// `herald store verify` beside a running gateway: it finds a counter edited behind the gateway's back,
/// exits 1, and with `--repair` sets it to the recount; the gateway then delivers the user's new badge.
@Suite("herald store verify, SQLite and PostgreSQL")
struct StoreVerifyTests {
    enum Backend: String, CaseIterable, Sendable { case sqlite, postgres }

    @Test(arguments: Backend.allCases) func aDriftedCounterIsReportedThenRepairedAndItsBadgeDelivered(_ backend: Backend) async throws {
        let cluster = backend == .postgres ? try await PostgresCluster.shared() : nil
        let url = try await cluster?.createDatabase()
        let fixture = try await GatewayFixture(storeURL: url)
        try await fixture.startHerald()
        let observer = try await TestMQTTClient(port: fixture.broker.port, subscriptions: ["users/bob/badge"])
        let client = try await TestMQTTClient(port: fixture.broker.port)
        try client.publish("chats/c1/messages", messageJSON(id: "m1", from: "alice", to: ["bob"], sentAt: 1_000))
        try client.publish("chats/c1/messages", messageJSON(id: "m2", from: "alice", to: ["bob"], sentAt: 2_000))
        try await observer.waitForMessages("bob's badge at 2") { $0.contains { $0.text == #"{"chats":{"c1":2},"unread":2}"# } }

        let clean = try await fixture.cli(["store", "verify"])
        #expect(clean.status == 0 && clean.output.contains("All 2 unread counters of 2 users equal a recount"), "\(clean.output)")

        // An edit behind the gateway's back, as a restored backup or a hand-made fix would leave.
        if let cluster, let url {
            try await cluster.psql(database: String(url.split(separator: "/").last ?? ""), "UPDATE unread_counters SET unread = 9 WHERE user_id = 'bob'")
        } else {
            try await DatabaseQueue(path: fixture.configuration.storePath).write { db in
                try db.execute(sql: "UPDATE unread SET count = 9 WHERE user = 'bob'")
            }
        }
        let drift = try await fixture.cli(["store", "verify"])
        #expect(drift.status == 1, "\(drift.output)")
        #expect(drift.output.contains("1 of 2 unread counters differ"), "\(drift.output)")
        #expect(drift.output.contains("bob   c1    9       2"), "\(drift.output)")
        #expect(drift.output.contains("--repair"), "\(drift.output)")

        let repair = try await fixture.cli(["store", "verify", "--repair"])
        #expect(repair.status == 0 && repair.output.contains("Repaired 1 counters of 1 users; their badges are queued for push."), "\(repair.output)")
        // The running gateway's dispatcher finds the queued badge and delivers it.
        try await observer.waitForMessages("bob's repaired badge") {
            $0.filter { $0.text == #"{"chats":{"c1":2},"unread":2}"# }.count == 2
        }
        let again = try await fixture.cli(["store", "verify"])
        #expect(again.status == 0, "\(again.output)")
        let badge = try await fixture.cli(["badge", "bob"])
        #expect(badge.output.contains(#"{"chats":{"c1":2},"unread":2}"#), "\(badge.output)")
        for peer in [observer, client] { try await peer.close() }
    }
}
