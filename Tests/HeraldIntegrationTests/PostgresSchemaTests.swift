import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Testing

/// `store.schema`: Herald's tables in a schema of their own, as in a database that other applications
/// share.
@Suite("The herald binary on PostgreSQL in a schema of its own")
struct PostgresSchemaTests {
    /// Two gateways on one database, each in its own schema: their tables, badges and outputs stay apart,
    /// and nothing lands in `public`.
    @Test func twoGatewaysInOneDatabaseKeepToTheirOwnSchemas() async throws {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.createDatabase()
        let database = String(url.split(separator: "/").last ?? "")
        let first = try await GatewayFixture(storeURL: url, storeExtra: "  schema: team_a")
        let second = try await GatewayFixture(storeURL: url, storeExtra: "  schema: team_b")
        let check = try await first.cli(["check"])
        #expect(check.status == 0 && check.output.contains("store:   PostgreSQL \(url)?sslmode=disable (schema team_a)"), "\(check.output)")
        try await first.startHerald()
        try await second.startHerald()

        var observers: [TestMQTTClient] = []
        for (fixture, messages) in [(first, ["a1"]), (second, ["b1", "b2"])] {
            let observer = try await TestMQTTClient(port: fixture.broker.port, subscriptions: ["users/bob/notifications"])
            let client = try await TestMQTTClient(port: fixture.broker.port)
            for id in messages { try client.publish("chats/c1/messages", messageJSON(id: id, from: "alice", to: ["bob"])) }
            try await observer.waitForMessages("bob's notifications") { $0.count == messages.count }
            try await client.close()
            observers.append(observer)
        }
        for (fixture, unread) in [(first, 1), (second, 2)] {
            let badge = try await fixture.cli(["badge", "bob"])
            #expect(badge.status == 0 && badge.output.contains(#""unread":\#(unread)"#), "\(badge.output)")
        }
        let tables = try await cluster.psql(database: database, """
            SELECT table_schema, string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables
            WHERE table_schema IN ('public', 'team_a', 'team_b') GROUP BY 1 ORDER BY 1
            """).split(separator: "\n").map { $0.split(separator: "|").map(String.init) }
        #expect(tables.map(\.first) == ["team_a", "team_b"], "nothing in public: \(tables)")
        #expect(tables.count == 2 && tables[0][1] == tables[1][1] && tables[0][1].contains("herald_schema_migrations,leases,messages"), "\(tables)")
        let counts = try await cluster.psql(database: database, "SELECT (SELECT count(*) FROM team_a.messages), (SELECT count(*) FROM team_b.messages)")
        #expect(counts.trimmingCharacters(in: .whitespacesAndNewlines) == "1|2")
        for observer in observers {
            #expect(observer.received.allSatisfy { $0.text.contains(#""message_id":"a1""#) } || observer.received.allSatisfy { $0.text.contains(#""message_id":"b"#) },
                    "each broker carries its own gateway's notifications")
            try await observer.close()
        }
    }

    @Test func aSchemaNameThatNeedsQuotingIsAConfigErrorWithItsKeyPath() async throws {
        let fixture = try await GatewayFixture(storeURL: "postgres://herald@127.0.0.1:5432/chats", storeExtra: "  schema: Team-A")
        let check = try await fixture.cli(["check"])
        #expect(check.status == 78 && check.output.contains("store.schema: must be a lower-case identifier"), "\(check.output)")
        let sqlite = try await GatewayFixture(storeExtra: "  schema: team_a")
        let refused = try await sqlite.cli(["check"])
        #expect(refused.status == 78 && refused.output.contains("store.schema: applies to PostgreSQL only"), "\(refused.output)")
    }
}
