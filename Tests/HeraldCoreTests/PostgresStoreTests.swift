import Foundation
import HeraldCore
import HeraldPluginAPI
@testable import HeraldPostgres
import HeraldTestKit
import Logging
import MetricsTestKit
import Testing

@Suite("PostgreSQL store: statements, settings and failures")
struct PostgresStoreTests {
    static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    @Test func aBatchOfOneAndABatchOfFiveThousandSendTheSameNumberOfStatements() async throws {
        let metrics = TestMetrics()
        let harness = try await RouterHarness(.postgres, metrics: metrics)
        let store = try #require(harness.store as? PostgresChatStore)
        @Sendable func mixedBatch(_ count: Int, prefix: String) -> [ChatEvent] {
            (0..<count).map { index in
                let chat = ChatID("\(prefix)-c\(index % 50)")
                return index % 5 == 4
                    ? read(UserID("u\(index % 7)"), chat, upTo: MessageID("\(prefix)-m\(index - 1)"))
                    : message(chat, MessageID("\(prefix)-m\(index)"), from: UserID("u\(index % 7)"), to: [UserID("u\((index + 1) % 7)")],
                              at: Int64(1000 + index))
            }
        }
        // A first batch creates the chats; the measured ones then touch the same kinds of rows.
        try await offCooperativePool {
            _ = try harness.router.commit(mixedBatch(10, prefix: "warm").map(harness.record))
            _ = try harness.router.commit(mixedBatch(5, prefix: "one").map(harness.record))
            _ = try harness.router.commit(mixedBatch(5_000, prefix: "many").map(harness.record))
        }
        // What an operator sees: the router records each commit's statements.
        let perCommit = try metrics.expectRecorder("herald_store_statements_per_commit").values
        #expect(perCommit.count == 3)
        let (small, large) = (perCommit.dropFirst().first ?? 0, perCommit.last ?? 0)
        // BEGIN, the slice after its chat locks, the unread counters with the stored ranges a recount needs,
        // herald_write_batch with the new messages (sent ahead of the apply), herald_write_batch with the
        // rest, COMMIT.
        #expect(small == 6, "statements for 5 events: \(small)")
        #expect(large == small, "statements for 5 events: \(small), for 5,000: \(large)")
        #expect(store.statementsInLastWrite == Int(large))
        #expect(try store.statistics().messages == 8 + 4 + 4_000)
    }

    /// The messages go to the server ahead of the apply (``ChatTransaction/storeMessagesAhead(_:)``); the
    /// write completes them, stores any the delta lists beyond them, and reports a message another writer
    /// stored first as a conflict, so the router applies the batch again.
    @Test func messagesSentAheadAreCompletedByTheWriteAndACollisionIsAConflict() async throws {
        let harness = try await RouterHarness(.postgres)
        let store = try #require(harness.store as? PostgresChatStore)
        func new(_ id: String) -> NewMessage {
            NewMessage(message: MessageReceived(chat: "c1", id: MessageID(id), sender: "alice", recipients: ["bob"], body: id,
                                                sentAt: Timestamp(milliseconds: 1000)), receivedAt: Timestamp(milliseconds: 2000))
        }
        let (m1, m2, m3) = (new("m1"), new("m2"), new("m3"))
        try await offCooperativePool {
            try store.write { tx in
                try tx.storeMessagesAhead([m1])
                var delta = StoreDelta()
                delta.messages = [m1, m2]
                try tx.write(delta)
            }
        }
        #expect(try store.statistics().messages == 2)
        let collision = try await offCooperativePool {
            do {
                try store.write { tx in
                    try tx.storeMessagesAhead([m2, m3])
                    var delta = StoreDelta()
                    delta.messages = [m2, m3]
                    try tx.write(delta)
                }
                return false
            } catch is StoreConflict {
                return true
            }
        }
        #expect(collision, "m2 was stored already")
        #expect(try store.statistics().messages == 2, "the conflicting batch left nothing behind")
    }

    @Test func theURLHoldsNoPasswordAndSaysHowTLSIsVerified() throws {
        let remote = try PostgresStoreSettings(url: "postgres://herald@db.example.com/chats", password: Secret("s3cret"))
        #expect(remote.tls == .verifyFull)
        #expect(remote.port == 5432)
        #expect(!remote.description.contains("s3cret"))
        let local = try PostgresStoreSettings(url: "postgresql://herald@127.0.0.1:6543/chats")
        #expect(local.tls == .disable && local.port == 6543)
        #expect(try PostgresStoreSettings(url: "postgres://h@db/chats?sslmode=verify-ca&sslrootcert=/etc/ca.pem").rootCertificatePath == "/etc/ca.pem")
        let refused = #expect(throws: PostgresSettingsError.self) { try PostgresStoreSettings(url: "postgres://herald:hunter2@db/chats") }
        #expect(refused?.description.contains("must not contain a password") == true)
        #expect(refused?.description.contains("hunter2") == false)
        #expect(throws: PostgresSettingsError.self) { try PostgresStoreSettings(url: "postgres://herald@db/chats?sslmode=maybe") }
        #expect(throws: PostgresSettingsError.self) { try PostgresStoreSettings(url: "mysql://herald@db/chats") }
        let listed = try PostgresStoreSettings(url: "postgres://h@db1:6000,db2,[2001:db8::1]:6001/chats?application_name=x")
        #expect(listed.endpoints.map(\.description) == ["db1:6000", "db2:5432", "[2001:db8::1]:6001"])
        #expect(listed.tls == .verifyFull && listed.database == "chats" && listed.user == "h" && listed.applicationName == "x")
        #expect(listed.description == "postgres://h@db1:6000,db2:5432,[2001:db8::1]:6001/chats?sslmode=verify-full&application_name=x")
        #expect(try PostgresStoreSettings(url: "postgres://h@127.0.0.1:1,localhost:2/chats").tls == .disable)
        #expect(try PostgresStoreSettings(url: "postgres://h@127.0.0.1:1,db:2/chats").tls == .verifyFull)
        let badPort = #expect(throws: PostgresSettingsError.self) { try PostgresStoreSettings(url: "postgres://h@db1:x,db2/chats") }
        #expect(badPort?.description == "store.url: \"db1:x\" in its list of servers has no valid port")
        #expect(throws: PostgresSettingsError.self) { try PostgresStoreSettings(url: "postgres://h@db1,/chats") }
        let certified = try PostgresStoreSettings(url: "postgres://h@db/chats?sslcert=/etc/h.pem&sslkey=/etc/h.key")
        #expect(certified.clientCertificatePath == "/etc/h.pem" && certified.clientKeyPath == "/etc/h.key")
        #expect(certified.description == "postgres://h@db:5432/chats?sslmode=verify-full&sslcert=/etc/h.pem&sslkey=/etc/h.key")
        let halfPair = #expect(throws: PostgresSettingsError.self) { try PostgresStoreSettings(url: "postgres://h@db/chats?sslcert=/etc/h.pem") }
        #expect(halfPair?.description == "store.url: sslcert and sslkey go together (the client certificate and its private key)")
        let plain = #expect(throws: PostgresSettingsError.self) {
            try PostgresStoreSettings(url: "postgres://h@127.0.0.1/chats?sslcert=/etc/h.pem&sslkey=/etc/h.key")
        }
        #expect(plain?.description.contains("a client certificate needs TLS; add sslmode=verify-full") == true)
    }

    /// A URL written for libpq, with its connect timeout and a request for a server that takes writes, works
    /// unchanged; what Herald cannot honour is refused with the reason.
    @Test func libpqsConnectTimeoutAndTargetSessionAttributesAreRead() throws {
        let url = "postgres://h@db1,db2/chats"
        #expect(try PostgresStoreSettings(url: url).connectTimeout == .seconds(10))
        let quick = try PostgresStoreSettings(url: url + "?connect_timeout=3&target_session_attrs=read-write")
        #expect(quick.connectTimeout == .seconds(3))
        #expect(quick.description == "postgres://h@db1:5432,db2:5432/chats?sslmode=verify-full&connect_timeout=3")
        #expect(try PostgresStoreSettings(url: url + "?target_session_attrs=primary").endpoints.count == 2)
        for wrong in ["0", "-1", "2.5", "x", "3601"] {
            let error = #expect(throws: PostgresSettingsError.self) { try PostgresStoreSettings(url: url + "?connect_timeout=\(wrong)") }
            #expect(error?.description == "store.url: connect_timeout must be whole seconds from 1 to 3600, got \(wrong)")
        }
        let standby = #expect(throws: PostgresSettingsError.self) { try PostgresStoreSettings(url: url + "?target_session_attrs=standby") }
        #expect(standby?.description.contains("target_session_attrs=standby cannot work for Herald, which writes") == true)
        let unknown = #expect(throws: PostgresSettingsError.self) { try PostgresStoreSettings(url: url + "?options=-c%20x&keepalives=1") }
        #expect(unknown?.description.hasPrefix("store.url: unknown parameter keepalives (known: sslmode,") == true, "\(String(describing: unknown))")
    }

    /// A DBA tells Herald's connections apart in `pg_stat_activity`: what each one does, under the name
    /// the URL gives (or `herald`).
    @Test func connectionsShowTheirApplicationAndRoleToTheServer() async throws {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.createDatabase()
        let database = String(url.split(separator: "/").last ?? "")
        let settings = try PostgresStoreSettings(url: url + "?application_name=bridge-eu")
        #expect(settings.description.hasSuffix("&application_name=bridge-eu"))
        #expect(try PostgresStoreSettings(url: url).applicationName == "herald")
        let store = try await offCooperativePool { try PostgresChatStore(settings: settings, logger: Self.logger) }
        _ = try await offCooperativePool { try store.badge(for: UserID("alice")) }
        let listener = Task { try await PostgresOutboxListener(settings: settings, signal: OutboxSignal(), logger: Self.logger).run() }
        defer { listener.cancel() }
        let query = "SELECT string_agg(application_name, ',' ORDER BY application_name) FROM pg_stat_activity WHERE datname = '\(database)'"
        try await eventually("the listener to connect", timeout: .seconds(20)) {
            try await cluster.psql(database: database, query).contains("bridge-eu/listener")
        }
        let names = try await cluster.psql(database: database, query).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(names.split(separator: ",").filter { $0.hasPrefix("bridge-eu/") } == ["bridge-eu/listener", "bridge-eu/reader", "bridge-eu/writer"])
        for wrong in ["", String(repeating: "x", count: 49), "caf\u{e9}"] {
            let error = #expect(throws: PostgresSettingsError.self) { try PostgresStoreSettings(url: url + "?application_name=\(wrong)") }
            #expect(error?.description.contains("application_name must be") == true)
        }
    }

    /// `durability: normal` turns `synchronous_commit` off in Herald's own sessions; `full` keeps what the
    /// server, database or role says (here `on`, set for the database: the tests' cluster turns it off).
    @Test func durabilityNormalTurnsSynchronousCommitOffInHeraldsSessionsOnly() async throws {
        let cluster = try await PostgresCluster.shared()
        let database = try await cluster.createDatabase()
        let name = try #require(database.split(separator: "/").last.map(String.init))
        _ = try await cluster.psql(database: name, "ALTER DATABASE \(name) SET synchronous_commit = on")
        for asynchronous in [false, true] {
            var settings = try PostgresStoreSettings(url: database)
            settings.asynchronousCommit = asynchronous
            let configured = settings
            let durability = try await offCooperativePool {
                try PostgresChatStore(settings: configured, logger: Self.logger).effectiveDurability()
            }
            #expect(durability == (asynchronous ? .normal : .full), "asynchronous commit \(asynchronous)")
        }
        let others = try await cluster.psql(database: name, "SHOW synchronous_commit")
        #expect(others.trimmingCharacters(in: .whitespacesAndNewlines) == "on", "another client's session keeps the database's setting")
    }

    /// A status page must not read every message of a large store: past a size, the count is the
    /// server's own live-row figure, and says so.
    @Test func largeStoresReportTheServersEstimateOfTheirMessages() async throws {
        let harness = try await RouterHarness(.postgres)
        let store = try #require(harness.store as? PostgresChatStore)
        try await harness.commitMessages(30, overChats: 3)
        #expect(try store.messageCount() == MessageCount(value: 30, estimated: false))
        // The server publishes its statistics shortly after a commit; the estimate follows them.
        try await eventually("the server's statistics to count the messages", timeout: .seconds(30)) {
            try store.messageCount(exactBelow: 1) == MessageCount(value: 30, estimated: true)
        }
    }

    @Test func anUnreachableServerIsOneClearLine() throws {
        let port = try Loopback.freePort()
        let settings = try PostgresStoreSettings(url: "postgres://herald@127.0.0.1:\(port)/chats", password: Secret("s3cret"))
        let error = #expect(throws: PostgresStoreError.self) { try PostgresChatStore(settings: settings, logger: Self.logger) }
        let text = error?.description ?? ""
        #expect(text.hasPrefix("cannot connect to PostgreSQL at postgres://herald@127.0.0.1:\(port)/chats"))
        #expect(!text.contains("s3cret") && !text.contains("\n"))
    }

    @Test func aSchemaNewerThanTheBinaryIsRefused() async throws {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.createDatabase()
        _ = try await offCooperativePool { try PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: Self.logger) }
        try await cluster.psql(database: String(url.split(separator: "/").last ?? ""),
                         "INSERT INTO herald_schema_migrations (version, name) VALUES (999, 'from the future')")
        let error = #expect(throws: PostgresStoreError.self) { try PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: Self.logger) }
        #expect(error?.description.contains("version 999") == true)
    }

    @Test func storesOpenedAtOnceMigrateOnce() async throws {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.createDatabase()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask { _ = try await offCooperativePool { try PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: Self.logger) } }
            }
            try await group.waitForAll()
        }
        let versions = try await cluster.psql(database: String(url.split(separator: "/").last ?? ""), "SELECT string_agg(version::text, ',' ORDER BY version) FROM herald_schema_migrations")
        #expect(versions.trimmingCharacters(in: .whitespacesAndNewlines) == PostgresSchema.migrations.map { "\($0.version)" }.joined(separator: ","),
                "every migration applied once")
    }

    /// While one sink is down its packs pile up; another sink's reads must not pass over them, whatever
    /// plan the server caches for the statement (a generic plan knows no sink). The statement is prepared
    /// as `herald_pending_outputs` holds it: its parameter types, and the generic plan it always uses.
    @Test func aSinksOutboxReadSearchesOnlyItsOwnEntries() async throws {
        let (cluster, database) = try await Self.analysedOutbox("""
            INSERT INTO outbox_packs (sink, created_at, outputs, entries)
                SELECT 'down', i, 256, '\\x00' FROM generate_series(1, 20000) AS i;
            INSERT INTO outbox (sink, recipient, kind, payload, created_at) VALUES ('push', 'u1', 'badge', '\\x00', 1);
            """)
        let plan = try await cluster.psql(database: database, """
            SET plan_cache_mode = force_generic_plan;
            PREPARE pending(text, bigint, bigint, bigint) AS \(PostgresChatStore.pendingOutputsSQL);
            EXPLAIN EXECUTE pending('push', 0, 1, 256);
            """)
        #expect(plan.contains("Index Scan using outbox_packs_pkey"), "plan: \(plan)")
        #expect(plan.contains("Index Cond: ((sink = $1) AND (seq >= $2))"), "plan: \(plan)")
        #expect(!plan.contains("Seq Scan"), "plan: \(plan)")
    }

    /// A purge finds each delivered pack by its key, whatever the number of packs waiting, with the plan
    /// `herald_remove_outputs` keeps (the statement prepared with the function's settings): one made for an
    /// outbox of 20,000 packs, and one made while the outbox was empty and unanalysed, which the function
    /// keeps as the outbox grows.
    @Test func aPurgeLooksTheDeliveredPacksUpByTheirKey() async throws {
        let (cluster, database) = try await Self.analysedOutbox("""
            INSERT INTO outbox_packs (sink, created_at, outputs, entries)
                SELECT 'push', i, 256, '\\x00' FROM generate_series(1, 20000) AS i;
            """)
        let empty = try await cluster.createDatabase()
        _ = try await offCooperativePool { try PostgresChatStore(settings: PostgresStoreSettings(url: empty), logger: Self.logger) }
        for database in [database, String(empty.split(separator: "/").last ?? "")] {
            let plan = try await cluster.psql(database: database, """
                SELECT set_config(split_part(c, '=', 1), split_part(c, '=', 2), false)
                    FROM pg_proc, unnest(proconfig) AS c WHERE proname = 'herald_remove_outputs';
                PREPARE purge(text, bigint[], integer[], integer[]) AS \(PostgresChatStore.removeOutputsSQL);
                EXPLAIN EXECUTE purge('push', '{1001,1002,1003}', '{0,0,0}', '{256,256,10}');
                """)
            #expect(plan.contains("force_generic_plan"), "the function's settings: \(plan)")
            // Both statements read outbox_packs through its key with the packs named, never all of a sink's.
            #expect(plan.components(separatedBy: "Index Cond: ((sink = $1) AND (seq = ANY ($2)))").count == 3, "plan: \(plan)")
            #expect(!plan.contains("Seq Scan"), "plan: \(plan)")
            #expect(!plan.contains("Index Cond: (sink = $1)"), "plan: \(plan)")
        }
    }

    /// A new store's database whose outbox holds what `rows` inserts, analysed for the planner.
    private static func analysedOutbox(_ rows: String) async throws -> (cluster: PostgresCluster, database: String) {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.createDatabase()
        _ = try await offCooperativePool { try PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: logger) }
        let database = String(url.split(separator: "/").last ?? "")
        try await cluster.psql(database: database, rows + "\nANALYZE outbox_packs;")
        return (cluster, database)
    }
}
