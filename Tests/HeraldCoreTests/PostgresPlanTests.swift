import HeraldCore
import HeraldPostgres
import HeraldTestKit
import Logging
import Testing

/// A commit's reads run in server-side functions whose plans PostgreSQL keeps for the connection; a kept
/// plan is made without the batch's keys. Every read must still look its keys up: a plan that scans whole
/// tables costs little while they are small and grows with the store.
@Suite("PostgreSQL read plans")
struct PostgresPlanTests {
    @Test func aCommitsReadsLookTheirKeysUpUnderAKeptPlan() async throws {
        let (cluster, database) = try await Self.newStore()
        // 1,000 chats of five members: tables small enough that, priced for spinning disks, scanning them looks cheaper.
        try await cluster.psql(database: database, """
            INSERT INTO chats (chat, declared) SELECT 'c' || i, false FROM generate_series(1, 1000) AS i;
            INSERT INTO chat_members (chat, user_id, declared, inferred)
                SELECT 'c' || (i % 1000), 'u' || i, false, true FROM generate_series(1, 5000) AS i;
            INSERT INTO read_positions (chat, user_id, sent_at, message_id)
                SELECT 'c' || (i % 1000), 'u' || i, i, 'm' || i FROM generate_series(1, 5000) AS i;
            INSERT INTO presence (chat, user_id, until) SELECT 'c' || (i % 1000), 'u' || i, i FROM generate_series(1, 5000) AS i;
            INSERT INTO pending_reads (chat, message_id, user_id, read_at)
                SELECT 'c' || (i % 1000), 'x' || i, 'u' || i, i FROM generate_series(1, 5000) AS i;
            INSERT INTO unread_counters (user_id, chat, unread) SELECT 'u' || i, 'c' || (i % 1000), 1 FROM generate_series(1, 5000) AS i;
            INSERT INTO messages (chat, id, sender, body, sent_at, received_at)
                SELECT 'c' || (i % 1000), 'm' || i, 'u' || i, 'hi', i, i FROM generate_series(1, 20000) AS i;
            ANALYZE;
            """)
        let plans = try await Self.keptPlans(in: database, on: cluster, of: """
            SELECT count(*) FROM herald_load_slice(ARRAY['c1', 'c2', 'c3'], ARRAY['c1'], ARRAY['m1']);
            SELECT count(*) FROM herald_load_counters(ARRAY['u1', 'u2'], ARRAY['c1'], ARRAY['u1'], ARRAY[0::int8],
                                                      ARRAY[''], ARRAY[100000::int8], ARRAY['m99999']);
            """)
        for table in ["chats", "chat_members", "read_positions", "presence", "pending_reads", "unread_counters", "messages"] {
            #expect(plans.contains(" on \(table)"), "no plan reads \(table): \(plans)")
        }
        #expect(!plans.contains("Seq Scan"), "plans: \(plans)")
    }

    /// A new store's first commits plan against empty tables that no `ANALYZE` has seen, and the writer
    /// keeps those plans while the tables grow. They must read by key all the same.
    @Test func plansMadeOnANewStoreLookTheirKeysUp() async throws {
        let (cluster, database) = try await Self.newStore()
        let empty = "'{}'::text[]"
        let plans = try await Self.keptPlans(in: database, on: cluster, of: """
            SELECT count(*) FROM herald_load_slice(ARRAY['c1', 'c2'], ARRAY['c1'], ARRAY['m1']);
            SELECT count(*) FROM herald_load_counters(ARRAY['u1', 'u2'], ARRAY['c1'], ARRAY['u1'], ARRAY[0::int8],
                                                      ARRAY[''], ARRAY[100::int8], ARRAY['m9']);
            SELECT herald_write_batch(
                ARRAY['c1'], ARRAY['m1'], ARRAY['u1'], ARRAY['hi'], ARRAY[1::int8], ARRAY[1::int8],
                \(empty), '{}'::bool[], \(empty), \(empty), '{}'::bool[], '{}'::bool[],
                ARRAY['c1'], ARRAY['u2'], ARRAY[1::int8], ARRAY['m1'],
                \(empty), \(empty), \(empty), '{}'::int8[],
                ARRAY['c1'], ARRAY['m1'],
                ARRAY['u2', 'u3'], ARRAY['c1', 'c1'], ARRAY[1, -1],
                \(empty), \(empty), '{}'::int8[],
                ARRAY['c1'], ARRAY['u2'],
                \(empty), '{}'::int8[], '{}'::int4[], '{}'::bytea[],
                \(empty), \(empty), \(empty), \(empty), '{}'::bytea[], '{}'::int4[], '{}'::int8[],
                \(empty), \(empty), \(empty), 1::int8,
                ARRAY['source'], ARRAY['key']);
            """)
        for table in ["chat_members", "read_positions", "presence", "pending_reads", "unread_counters", "messages", "source_checkpoints"] {
            #expect(plans.contains(" on \(table)"), "no plan reads \(table): \(plans)")
        }
        #expect(!plans.contains("Seq Scan"), "plans: \(plans)")
    }

    /// A database on the shared cluster that a store has migrated, and its name.
    private static func newStore() async throws -> (PostgresCluster, String) {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.createDatabase()
        _ = try await offCooperativePool { try PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }) }
        return (cluster, String(url.split(separator: "/").last ?? ""))
    }

    /// The plan of every statement inside the functions that `calls` runs, each made generic, as a plan
    /// the writer keeps is: auto_explain hands them to the client.
    private static func keptPlans(in database: String, on cluster: PostgresCluster, of calls: String) async throws -> String {
        try await cluster.psql(database: database, """
            LOAD 'auto_explain';
            SET auto_explain.log_min_duration = 0;
            SET auto_explain.log_nested_statements = on;
            SET auto_explain.log_level = notice;
            SET plan_cache_mode = force_generic_plan;
            \(calls)
            """)
    }
}
