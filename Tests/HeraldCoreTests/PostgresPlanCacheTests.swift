import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldPostgres
import HeraldTestKit
import Logging
import Testing

/// The statements inside a commit's functions, and a dispatcher's read, are planned once per connection,
/// whatever the commits' sizes: a commit of one message does not plan the slice anew.
@Suite("PostgreSQL store: a commit's plans are kept")
struct PostgresPlanCacheTests {
    /// Counted by `pg_stat_statements` on a cluster of the test's own, which loads it: over 60 commits
    /// of one message (20 of them with a read) and one of 400, every statement the functions run at each
    /// commit, and the dispatcher's read at each of 60 deliveries, was planned at
    /// most a few times (once per connection, and again after an invalidation such as autovacuum's
    /// `ANALYZE`), not at every commit.
    @Test func aCommitsStatementsArePlannedOncePerConnectionWhateverTheBatchSize() async throws {
        let cluster = try await PostgresCluster(settings: [
            ("shared_preload_libraries", "pg_stat_statements"), ("pg_stat_statements.track", "all"),
            ("pg_stat_statements.track_planning", "on"),
        ])
        let url = try await cluster.createDatabase()
        let database = String(url.split(separator: "/").last ?? "")
        try await cluster.psql(database: database, "CREATE EXTENSION pg_stat_statements")
        let directory = try TemporaryDirectory()
        let store = try await offCooperativePool {
            try PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        }
        let harness = try RouterHarness(store: store, in: directory)
        try await offCooperativePool {
            for index in 0..<40 {
                try harness.apply(message(ChatID("one\(index % 10)"), MessageID("m\(index)"), from: "alice", to: ["bob"], at: Int64(1000 + index)))
            }
        }
        try await harness.commitMessages(400, overChats: 100)
        try await offCooperativePool {
            for index in 0..<20 {
                try harness.apply(message(ChatID("two\(index)"), MessageID("m\(index)"), from: "carol", to: ["dave"], at: Int64(2000 + index)),
                                  read("bob", ChatID("one\(index % 10)"), upTo: MessageID("m\(index)")))
            }
        }
        try await offCooperativePool {
            for _ in 0..<60 {
                _ = try store.pendingOutputs(sink: "sink", after: 0, limit: 10)
            }
        }
        let counts = try await cluster.psql(database: database, """
            SELECT s.calls || ' ' || s.plans || ' ' || regexp_replace(left(s.query, 60), '\\s+', ' ', 'g')
            FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
            WHERE d.datname = '\(database)' AND NOT s.toplevel AND s.calls >= 60 ORDER BY s.query
            """).split(separator: "\n").map(String.init)
        let statements = counts.map { $0.split(separator: " ", maxSplits: 2).map(String.init) }
        #expect(statements.count >= 6, "the functions' statements: \(counts)")
        #expect(counts.contains { $0.contains("SELECT seq, created_at, delivered") }, "the dispatcher's read: \(counts)")
        for statement in statements {
            #expect((Int(statement[1]) ?? .max) <= 3, "calls, plans, statement: \(statement.joined(separator: " "))")
        }
    }
}
