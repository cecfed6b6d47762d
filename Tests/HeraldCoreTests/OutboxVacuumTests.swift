import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldPostgres
import HeraldTestKit
import Logging
import Metrics
import Testing

/// The PostgreSQL outbox is vacuumed once the dispatchers have removed enough entries, so a read from the
/// start of a sink's entries does not walk over the deleted ones until autovacuum comes by.
@Suite("Outbox vacuum, PostgreSQL")
struct OutboxVacuumTests {
    private static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    @Test func theOutboxIsVacuumedOnceTheRemovedEntriesReachTheThreshold() async throws {
        let (cluster, database, store) = try await Self.storeWithOutbox(entries: 300)
        let vacuum = OutboxVacuum(store: store, threshold: 200, logger: Self.logger, metrics: NOOPMetricsHandler.instance)
        #expect(try await offCooperativePool { try store.mayVacuumOutbox() })

        let sequences = try await offCooperativePool { try store.pendingOutputs(sink: "push", after: 0, limit: 300).map(\.sequence) }
        #expect(sequences.count == 300)
        try await offCooperativePool { try store.removeOutputs(sink: "push", delivered: Array(sequences[0..<100])) }
        #expect(try await vacuum.vacuumOnce() == false)
        #expect(try await Self.vacuumCount(cluster, database) == 0)

        try await offCooperativePool { try store.removeOutputs(sink: "push", delivered: Array(sequences[100..<250])) }
        #expect(try await vacuum.vacuumOnce())
        #expect(try await Self.vacuumCount(cluster, database) == 1)
        // The count starts over: the next vacuum waits for another 200 removed entries.
        #expect(try await vacuum.vacuumOnce() == false)
        #expect(try await cluster.psql(database: database, "SELECT count(*) FROM outbox").trimmingCharacters(in: .whitespacesAndNewlines) == "50")
    }

    @Test func aRoleThatDoesNotOwnTheOutboxLeavesItToAutovacuum() async throws {
        let (cluster, database, _) = try await Self.storeWithOutbox(entries: 1)
        let role = "reader_\(database)"
        try await cluster.psql(database: database, """
            CREATE ROLE \(role) LOGIN; GRANT CREATE ON SCHEMA public TO \(role); GRANT ALL ON ALL TABLES IN SCHEMA public TO \(role);
            GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO \(role); GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO \(role);
            """)
        let url = "postgres://\(role)@127.0.0.1:\(cluster.port)/\(database)"
        let store = try await offCooperativePool { try PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: Self.logger) }
        #expect(try await offCooperativePool { try store.mayVacuumOutbox() } == false)
    }

    /// A new database with `entries` outbox entries for the sink `push`.
    private static func storeWithOutbox(entries: Int) async throws -> (PostgresCluster, String, PostgresChatStore) {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.createDatabase()
        let store = try await offCooperativePool { try PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: logger) }
        let database = String(url.split(separator: "/").last ?? "")
        try await cluster.psql(database: database, """
            INSERT INTO outbox(sink, recipient, kind, payload, created_at)
            SELECT 'push', 'u' || g, 'notification', '\\x00', 0 FROM generate_series(1, \(entries)) g
            """)
        return (cluster, database, store)
    }

    private static func vacuumCount(_ cluster: PostgresCluster, _ database: String) async throws -> Int {
        let text = try await cluster.psql(database: database, "SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'outbox_packs'")
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }
}
