import Foundation
import HeraldCore
@testable import HeraldPostgres
import HeraldTestKit
import Logging
import Testing

/// A production database often has two roles: one owns Herald's schema and migrates it, the gateway runs as
/// another that may only read and write rows (docs/store.md#roles).
@Suite("The herald binary on PostgreSQL with a schema owner and a gateway role")
struct PostgresRolesTests {
    @Test func theGatewayRunsAsARoleThatMayOnlyReadAndWriteRows() async throws {
        let (cluster, database, owner, gateway) = try await Self.ownedDatabase("roles")
        let ownerURL = "postgres://\(owner)@127.0.0.1:\(cluster.port)/\(database)"
        let gatewayURL = "postgres://\(gateway)@127.0.0.1:\(cluster.port)/\(database)"
        let fixture = try await GatewayFixture(storeURL: gatewayURL)

        // The gateway's role may not create the schema: one line that says who can.
        let refused = try await fixture.cli(["run"])
        #expect(refused.status != 0)
        #expect(refused.output.contains("which role \(gateway) may not apply") && refused.output.contains("run `herald store migrate` as the role that owns the schema"),
                "\(refused.output)")
        #expect(try await cluster.psql(database: database, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
            .trimmingCharacters(in: .whitespacesAndNewlines) == "0", "nothing half made")

        // A deployment pipeline asks first, and changes nothing by asking.
        let unmigrated = try await fixture.cli(["store", "migrate", "--check", "--url", ownerURL])
        #expect(unmigrated.status == 1 && unmigrated.output.contains("Herald's schema in \(ownerURL)?sslmode=disable lacks \(PostgresSchema.knownVersion) migrations")
                && unmigrated.output.contains("  1: chat model, outbox, dead letters, checkpoints"), "\(unmigrated.output)")
        #expect(try await cluster.psql(database: database, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
            .trimmingCharacters(in: .whitespacesAndNewlines) == "0", "--check creates nothing")

        let migrated = try await fixture.cli(["store", "migrate", "--url", ownerURL])
        #expect(migrated.status == 0 && migrated.output.contains("Created Herald's schema, version \(PostgresSchema.knownVersion), in \(ownerURL)?sslmode=disable:")
                && migrated.output.contains("  1: chat model, outbox, dead letters, checkpoints"), "\(migrated.output)")
        let again = try await fixture.cli(["store", "migrate", "--url", ownerURL])
        #expect(again.status == 0 && again.output.contains("Herald's schema in \(ownerURL)?sslmode=disable is current (version \(PostgresSchema.knownVersion))."), "\(again.output)")
        #expect(try await cluster.psql(database: database, "SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'")
            .trimmingCharacters(in: .whitespacesAndNewlines) == owner)

        // A current schema is only read at start; the gateway's role still lacks the rows' privileges, and
        // this database keeps functions from PUBLIC.
        try await runAs(owner, cluster, database, "REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA public FROM PUBLIC")
        let ungranted = try await fixture.cli(["run"])
        #expect(ungranted.status != 0)
        #expect(ungranted.output.contains("""
            role \(gateway) lacks privileges Herald needs: EXECUTE on herald_load_counters(), herald_load_slice(), herald_pending_outputs(), herald_remove_outputs(), herald_write_batch(); \
            SELECT on herald_schema_migrations; SELECT, INSERT, UPDATE, DELETE on chat_members, chats, dead_letters, leases, messages, \
            outbox, outbox_packs, pending_reads, presence, read_positions, source_checkpoints, unread_counters; \
            USAGE on public.dead_letters_id_seq, public.messages_seq_seq, public.outbox_packs_seq_seq; grant them as the schema's owner
            """), "\(ungranted.output)")

        // The grants docs/store.md gives for a schema that exists, run as its owner.
        try await runAs(owner, cluster, database, "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO \(gateway)")
        try await runAs(owner, cluster, database, "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO \(gateway)")
        try await runAs(owner, cluster, database, "GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO \(gateway)")
        let current = try await fixture.cli(["store", "migrate", "--check"])
        #expect(current.status == 0 && current.output.contains("Herald's schema in \(gatewayURL)?sslmode=disable is current."), "\(current.output)")
        try await fixture.startHerald()
        let observer = try await TestMQTTClient(port: fixture.broker.port, subscriptions: ["users/bob/badge"])
        let client = try await TestMQTTClient(port: fixture.broker.port)
        try client.publish("chats/c1/messages", messageJSON(id: "m1", from: "alice", to: ["bob"]))
        try await observer.waitForMessages("bob's badge") { $0.contains { $0.text == #"{"chats":{"c1":1},"unread":1}"# } }
        let badge = try await fixture.cli(["badge", "bob"])
        #expect(badge.status == 0 && badge.output.contains(#""unread":1"#), "\(badge.output)")
        for peer in [observer, client] { try await peer.close() }
    }

    /// docs/store.md's set-up for a new database with Herald in a schema of its own: the owner creates
    /// the schema and sets default privileges first, so what it migrates is the gateway's to read and
    /// write without another grant once the gateway may use the schema.
    @Test func defaultPrivilegesCoverWhatTheOwnerMigrates() async throws {
        let (cluster, database, owner, gateway) = try await Self.ownedDatabase("defaults")
        try await runAs(owner, cluster, database, "CREATE SCHEMA chat")
        try await runAs(owner, cluster, database, "ALTER DEFAULT PRIVILEGES IN SCHEMA chat GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO \(gateway)")
        try await runAs(owner, cluster, database, "ALTER DEFAULT PRIVILEGES IN SCHEMA chat GRANT USAGE ON SEQUENCES TO \(gateway)")
        let fixture = try await GatewayFixture(storeURL: "postgres://\(gateway)@127.0.0.1:\(cluster.port)/\(database)", storeExtra: "  schema: chat")

        let migrated = try await fixture.cli(["store", "migrate", "--url", "postgres://\(owner)@127.0.0.1:\(cluster.port)/\(database)", "--schema", "chat"])
        #expect(migrated.status == 0 && migrated.output.contains("(schema chat):"), "\(migrated.output)")
        let withoutUsage = try await fixture.cli(["badge", "bob"])
        #expect(withoutUsage.status != 0 && withoutUsage.output.contains("role \(gateway) lacks privileges Herald needs: USAGE on schema chat;"),
                "\(withoutUsage.output)")
        try await runAs(owner, cluster, database, "GRANT USAGE ON SCHEMA chat TO \(gateway)")
        let badge = try await fixture.cli(["badge", "bob"])
        #expect(badge.status == 0 && badge.output.contains(#"{"chats":{},"unread":0}"#), "\(badge.output)")
        #expect(try await cluster.psql(database: database, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
            .trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }

    /// A new database owned by a new role, and another new role for the gateway, with nothing granted to it.
    static func ownedDatabase(_ prefix: String) async throws -> (cluster: PostgresCluster, database: String, owner: String, gateway: String) {
        let cluster = try await PostgresCluster.shared()
        let database = "\(prefix)_\(getpid())_\(UInt32.random(in: 0...UInt32.max))"
        let owner = "\(database)_owner", gateway = "\(database)_gateway"
        try await cluster.psql(database: "postgres", "CREATE ROLE \(owner) LOGIN")
        try await cluster.psql(database: "postgres", "CREATE ROLE \(gateway) LOGIN")
        try await cluster.psql(database: "postgres", "CREATE DATABASE \(database) OWNER \(owner)")
        return (cluster, database, owner, gateway)
    }

    /// Runs `sql` in `database` as `role` (the cluster trusts loopback logins).
    private func runAs(_ role: String, _ cluster: PostgresCluster, _ database: String, _ sql: String) async throws {
        try await Command.run("/usr/bin/psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(cluster.port)",
                                          "-U", role, "-d", database, "-c", sql])
    }
}
