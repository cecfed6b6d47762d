import Foundation
import HeraldTestKit
import Testing

/// A server that asks for a password (SCRAM-SHA-256), as production servers do: the password comes from
/// `store.password_file`, a wrong one stops start with one line that does not show it, and a rotated one is
/// read again when a connection is opened, without a restart.
@Suite("The herald binary on PostgreSQL with password authentication")
struct PostgresPasswordTests {
    @Test func aPasswordFileLogsInAWrongPasswordIsOneLineAndARotatedOneIsReadAgain() async throws {
        let cluster = try await PostgresCluster()  // its own: its access rules change
        let database = try await String(cluster.createDatabase().split(separator: "/").last ?? "")
        try await cluster.psql(database: database, "CREATE ROLE gateway LOGIN PASSWORD 'first-secret'; GRANT ALL ON SCHEMA public TO gateway")
        try await cluster.requirePassword(for: "gateway")
        let directory = try TemporaryDirectory()
        let passwordFile = try directory.write("db-password", "wrong-secret\n")
        let fixture = try await GatewayFixture(storeURL: "postgres://gateway@127.0.0.1:\(cluster.port)/\(database)",
                                               storeExtra: "  password_file: \(passwordFile)")

        let refused = try await fixture.cli(["run"])
        #expect(refused.status != 0)
        #expect(refused.output.contains("cannot connect to PostgreSQL at postgres://gateway@127.0.0.1:\(cluster.port)/\(database)")
                && refused.output.contains(#"password authentication failed for user "gateway""#), "\(refused.output)")
        #expect(!refused.output.contains("wrong-secret"), "the password is never shown")

        _ = try directory.write("db-password", "first-secret\n")
        try await fixture.startHerald()
        let client = try await TestMQTTClient(port: fixture.broker.port)
        func stored() async -> Int? {
            (try? await cluster.psql(database: database, "SELECT count(*) FROM messages")).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        try client.publish("chats/c1/messages", messageJSON(id: "m1", from: "alice", to: ["bob"]))
        try await eventually("the first message stored") { await stored() == 1 }

        // The password rotates: the role's first, then the file; the sessions logged in with the old one end.
        try await cluster.psql(database: database, "ALTER ROLE gateway PASSWORD 'second-secret'")
        _ = try directory.write("db-password", "second-secret\n")
        try await cluster.psql(database: database, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = 'gateway'")
        try client.publish("chats/c1/messages", messageJSON(id: "m2", from: "alice", to: ["bob"]))
        try await eventually("the second message stored through a connection with the new password", timeout: .seconds(60)) { await stored() == 2 }
        #expect(!fixture.logs.contains("first-secret") && !fixture.logs.contains("second-secret"), "the password is never logged")
        try await client.close()
    }
}
