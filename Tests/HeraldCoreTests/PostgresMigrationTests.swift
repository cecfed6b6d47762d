import Foundation
import HeraldCore
import HeraldPluginAPI
@testable import HeraldPostgres
import HeraldTestKit
import Logging
import NIOCore
import Testing

/// A store made by an older Herald takes the newer migrations at start, with its data intact.
@Suite("PostgreSQL store: migrating a store that holds data")
struct PostgresMigrationTests {
    static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// A store left at version 4 (identifiers in the database's collation, the outbox a row per output)
    /// takes migrations 5 to the newest: identifier columns compare byte-wise as in a new store, its
    /// messages, counters and undelivered outputs (in order, with their attempts) are all still there, and
    /// a counter left at 0 is gone.
    @Test func aVersionFourStoreKeepsItsDataThroughTheNewerMigrations() async throws {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.createDatabase()
        let database = String(url.split(separator: "/").last ?? "")
        let old = PostgresSchema.migrations.filter { $0.version <= 4 }
        try await cluster.psql(database: database, """
            CREATE TABLE herald_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
            \(old.flatMap(\.sql).joined(separator: ";\n"));
            INSERT INTO herald_schema_migrations (version, name) VALUES \(old.map { "(\($0.version), 'v\($0.version)')" }.joined(separator: ", "));
            INSERT INTO chats (chat, declared) SELECT 'c' || c, false FROM generate_series(0, 3) c;
            INSERT INTO chat_members (chat, user_id, declared, inferred)
                SELECT 'c' || c, u, false, true FROM generate_series(0, 3) c, unnest(ARRAY['alice', 'bob']) u;
            INSERT INTO messages (chat, id, sender, body, sent_at, received_at)
                SELECT 'c' || (i % 4), 'm' || i, 'alice', 'body ' || i, 1000 + i, 2000 + i FROM generate_series(0, 19) i;
            INSERT INTO unread_counters (user_id, chat, unread) SELECT 'bob', 'c' || c, 5 FROM generate_series(0, 3) c;
            INSERT INTO unread_counters (user_id, chat, unread) VALUES ('alice', 'c0', 0);
            INSERT INTO outbox (sink, recipient, kind, payload, created_at)
                SELECT 'sink', 'bob', 'notification', convert_to('{"n":' || i || '}', 'UTF8'), 3000 + i FROM generate_series(0, 24) i;
            UPDATE outbox SET attempts = 2 WHERE seq = (SELECT min(seq) FROM outbox);
            """)

        var announced: [String] = []
        let store = try PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: Self.logger) { announced = $0 }
        #expect(announced == PostgresSchema.migrations.filter { $0.version > 4 }.map(\.name))

        let freshURL = try await cluster.createDatabase()
        let fresh = String(freshURL.split(separator: "/").last ?? "")
        _ = try await offCooperativePool { try PostgresChatStore(settings: PostgresStoreSettings(url: freshURL), logger: Self.logger) }
        let byteWise = """
            SELECT string_agg(table_name || '.' || column_name, ' ' ORDER BY 1, 2) FROM information_schema.columns
            WHERE table_schema = 'public' AND collation_name = 'C'
            """
        #expect(try await cluster.psql(database: database, byteWise) == (try cluster.psql(database: fresh, byteWise)))

        #expect(try store.statistics().messages == 20)
        #expect(try store.badge(for: "bob").unread == 20)
        // The counter an older write left at 0 is gone (migration 12).
        #expect(try store.modelSnapshot().filter { $0.hasPrefix("u|") } == (0...3).map { "u|bob|c\($0)|5" })
        #expect(try store.unreadAgainstRecount().allSatisfy { $0.stored == $0.recounted })
        #expect(try store.outboxDepth() == ["sink": 25])
        let pending = try store.pendingOutputs(sink: "sink", after: 0, limit: 100)
        #expect(pending.map { String(decoding: $0.payload, as: UTF8.self) } == (0..<25).map { "{\"n\":\($0)}" })
        #expect(pending.map(\.recipient) == Array(repeating: "bob", count: 25))
        #expect(pending.map(\.kind) == Array(repeating: .notification, count: 25))
        #expect(pending.map(\.createdAt.milliseconds) == (0..<25).map { 3000 + Int64($0) })
        #expect(pending.map(\.attempts) == [2] + Array(repeating: 0, count: 24))
        try store.removeOutputs(sink: "sink", delivered: pending.prefix(10).map(\.sequence))
        #expect(try store.outboxDepth() == ["sink": 15])
    }

    /// A migration that defines a commit's function anew gives it its planner settings again (`CREATE OR
    /// REPLACE FUNCTION` drops them): in a new store the three functions read by key, priced as on an SSD,
    /// with generic plans (migration 10), and the write inserts the messages the slice found new with no
    /// conflict check (migration 9).
    @Test func theCommitFunctionsKeepTheirSettingsAndTheWriteChecksNoConflicts() async throws {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.createDatabase()
        let database = String(url.split(separator: "/").last ?? "")
        _ = try await offCooperativePool { try PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: Self.logger) }
        let settings = try await cluster.psql(database: database, """
            SELECT proname || ' ' || array_to_string(ARRAY(SELECT unnest(proconfig) ORDER BY 1), ',') FROM pg_proc
            WHERE proname IN ('herald_load_slice', 'herald_load_counters', 'herald_write_batch') ORDER BY proname
            """).split(separator: "\n").map(String.init)
        #expect(settings == ["herald_load_counters", "herald_load_slice", "herald_write_batch"].map {
            "\($0) enable_seqscan=off,plan_cache_mode=force_generic_plan,random_page_cost=\(PostgresReadFunctions.pageCost)"
        })
        let body = try await cluster.psql(database: database, "SELECT prosrc FROM pg_proc WHERE proname = 'herald_write_batch'")
        #expect(body.contains("INSERT INTO messages") && !body.contains("ON CONFLICT (chat, id)"))
    }

    /// The `outbox` view shows each output Herald packed as a row, as the table did: the entries that the
    /// gateway writes and the ones SQL reads are the same bytes.
    @Test func theOutboxViewShowsEachUndeliveredOutputAsARow() async throws {
        let harness = try await RouterHarness(.postgres)
        let store = try #require(harness.store as? PostgresChatStore)
        try await harness.commitMessages(300, overChats: 2)
        let pending = try store.pendingOutputs(sink: "sink", after: 0, limit: 10_000)
        #expect(pending.count > OutboxPack.maximumOutputs, "more than one pack")
        try store.removeOutputs(sink: "sink", delivered: pending.prefix(3).map(\.sequence))
        let undelivered = pending.dropFirst(3)

        let cluster = try await PostgresCluster.shared()
        let rows = try await cluster.psql(database: store.settings.database, """
            SELECT seq || ' ' || recipient || ' ' || kind || ' ' || created_at || ' ' || encode(payload, 'hex') FROM outbox ORDER BY seq
            """).split(separator: "\n").map(String.init)
        let expected = undelivered.map { envelope in
            "\(envelope.sequence) \(envelope.recipient) \(envelope.kind.rawValue) \(envelope.createdAt.milliseconds) "
                + envelope.payload.map { String(format: "%02x", $0) }.joined()
        }
        #expect(rows == Array(expected))
    }
}
