import Foundation
import HeraldCore
import HeraldPluginAPI
@testable import HeraldPostgres
import HeraldTestKit
import Logging
import MetricsTestKit
import PostgresNIO
import Testing

/// A database that stops answering must fail a commit within the statement timeout, not hold the
/// pipeline: on a server that hangs with its connections open, on a statement that runs too long,
/// and on a transaction whose client went silent while it held chat locks.
@Suite("PostgreSQL store: statement timeouts")
struct PostgresTimeoutTests {
    static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// A store on `cluster` whose statements may take one second.
    static func store(on cluster: PostgresCluster) async throws -> PostgresChatStore {
        var settings = try await PostgresStoreSettings(url: cluster.createDatabase())
        settings.statementTimeout = .seconds(1)
        let configured = settings
        return try await offCooperativePool { try PostgresChatStore(settings: configured, logger: Self.logger) }
    }

    /// A router that commits into `store`, with one sink for every output.
    static func router(on store: PostgresChatStore) -> EventRouter {
        EventRouter(store: store, policy: RouterPolicy(), routing: OutputRouting(sinkAccepts: [("sink", Set(OutputKind.allCases))]),
                    clock: SystemClock(), metrics: RouterMetrics(factory: NOOPMetricsHandler.instance), signal: OutboxSignal(),
                    logger: Self.logger)
    }

    /// The time limit leaves room for starting a cluster on a loaded host; a hang still ends the test.
    @Test(.timeLimit(.minutes(3)))
    func aServerThatStopsAnsweringFailsTheCommitAndIsReconnectedAfter() async throws {
        // A cluster of its own: freezing the shared one would stall the tests beside this one.
        let cluster = try await PostgresCluster()
        let store = try await Self.store(on: cluster)
        let router = Self.router(on: store)
        @Sendable func record(_ id: String) -> SourceRecord {
            SourceRecord(provenance: Provenance(adapter: "test", origin: "t", rawSize: 0, receivedAt: Timestamp(milliseconds: 1_700_000_000_000)),
                         outcome: .event(message("c1", MessageID(id), from: "alice", to: ["bob"], at: 1_000)), raw: [])
        }
        _ = try await offCooperativePool { try router.commit([record("m1")]) }

        cluster.freeze()
        defer { cluster.thaw() }
        let failure = await #expect(throws: IngestError.self) { _ = try await offCooperativePool { try router.commit([record("m2")]) } }
        #expect(failure?.description.contains("PostgreSQL did not answer within 2 s") == true, "\(String(describing: failure))")
        // The next attempt opens a new connection, which the frozen server does not answer either.
        let again = await #expect(throws: IngestError.self) { _ = try await offCooperativePool { try router.commit([record("m2")]) } }
        #expect(again != nil)
        cluster.thaw()

        // The broker would deliver m2 again: it is stored once, on a new connection.
        _ = try await offCooperativePool { try router.commit([record("m2")]) }
        #expect(try store.statistics().messages == 2)
        #expect(try store.badge(for: "bob").unread == 2)
    }

    /// Commits whose statements outlive their limit, again and again: each one fails within moments, however
    /// the watchdog's close meets its statement (PostgresNIO does not always fail a statement's future when
    /// its connection is closed under it; a commit then waited for good), and the link recovers on a new
    /// connection. Should the session ever wait on the connection alone again, this test hangs.
    @Test(.timeLimit(.minutes(2)))
    func statementsThatOutliveTheirLimitAlwaysFailAndNeverHang() async throws {
        let cluster = try await PostgresCluster.shared()
        var settings = try await PostgresStoreSettings(url: cluster.createDatabase())
        // The schema is created under the usual limit; opening the store still runs statements under the short one,
        // which a busy machine may need more than one try for.
        let usual = settings
        _ = try await offCooperativePool { try PostgresChatStore.migrateSchema(settings: usual, logger: Self.logger) }
        settings.statementTimeout = .milliseconds(20)  // the watchdog gives each statement 40 ms
        let configured = settings
        var opened: PostgresChatStore?
        try await eventually("the store opened with 40 ms a statement", timeout: .seconds(30)) {
            opened = try? await offCooperativePool { try PostgresChatStore(settings: configured, logger: Self.logger) }
            return opened != nil
        }
        let store = try #require(opened)
        let router = Self.router(on: store)
        @Sendable func records(_ prefix: String, _ count: Int) -> [SourceRecord] {
            (0..<count).map { index in
                SourceRecord(provenance: Provenance(adapter: "test", origin: "t", rawSize: 0, receivedAt: Timestamp(milliseconds: 1_700_000_000_000)),
                             outcome: .event(message(ChatID("c\(index % 300)"), MessageID("\(prefix)-m\(index)"), from: "alice",
                                                     to: ["bob", "carol"], at: Int64(1_000 + index))), raw: [])
            }
        }
        var failures: [String] = []
        for round in 0..<60 {
            do {
                _ = try await offCooperativePool { try router.commit(records("r\(round)", 3_000)) }
            } catch {
                failures.append("\(error)")
            }
        }
        #expect(!failures.isEmpty, "3,000 records within 40 ms a statement: the limit was never reached")
        // Unanswered, or ended by the server's own statement or idle-in-transaction timeout.
        #expect(failures.allSatisfy { $0.contains("did not answer") || $0.contains(" timeout") }, "\(Set(failures))")
        // A small commit goes through on a fresh connection once one answers in time.
        try await eventually("a small commit after the failures", timeout: .seconds(30)) {
            (try? await offCooperativePool { try router.commit(records("small", 1)) }) != nil
        }
        // Counting is a statement under the same 40 ms limit, so on a busy machine it may need another try too.
        try await eventually("the small commit's message counted", timeout: .seconds(30)) {
            ((try? await offCooperativePool { try store.statistics() })?.messages ?? 0) >= 1
        }
    }

    /// A server that takes the connection but never answers (stopped, a hung host) is given up on after the
    /// URL's `connect_timeout`; in a list of servers, the next one is tried.
    @Test(.timeLimit(.minutes(1)))
    func aServerThatDoesNotAnswerTheLoginIsGivenUpAfterTheConnectTimeout() async throws {
        let silent = try await PostgresCluster()  // its own: it is frozen
        let healthy = try await PostgresCluster.shared()
        let database = try await String(healthy.createDatabase().split(separator: "/").last ?? "")
        silent.freeze()
        defer { silent.thaw() }
        let alone = try PostgresStoreSettings(url: silent.url(database: "postgres") + "?connect_timeout=1")
        let error = await #expect(throws: PostgresStoreError.self) {
            _ = try await offCooperativePool { try PostgresChatStore(settings: alone, logger: Self.logger) }
        }
        #expect(error?.description.contains("no answer within 1 s (connect_timeout): the server is down, stopped or cut off") == true,
                "\(String(describing: error))")

        let listed = try PostgresStoreSettings(url: "postgres://herald@127.0.0.1:\(silent.port),127.0.0.1:\(healthy.port)/\(database)?connect_timeout=1")
        let metrics = TestMetrics()
        let store = try await offCooperativePool { try PostgresChatStore(settings: listed, logger: Self.logger, metrics: metrics) }
        #expect(try store.statistics().messages == 0, "the second server of the list answers")
        // A scrape says why the first server was passed over, and which one each connection is on.
        let silentServer = "127.0.0.1:\(silent.port)", healthyServer = "127.0.0.1:\(healthy.port)"
        #expect(try metrics.expectCounter("herald_store_connection_failures_total",
                                          [("role", "writer"), ("server", silentServer), ("reason", "timeout")]).totalValue == 1)
        #expect(try metrics.expectCounter("herald_store_connects_total", [("role", "reader"), ("server", healthyServer)]).totalValue == 1)
        #expect(try metrics.expectGauge("herald_store_connected", [("role", "writer"), ("server", healthyServer)]).lastValue == 1)
    }

    @Test func theServerEndsAStatementThatRunsTooLongAndAnIdleTransaction() async throws {
        let store = try await Self.store(on: try await PostgresCluster.shared())
        let failure = #expect(throws: PostgresStoreError.self) { try store.read { session in try session.query("SELECT pg_sleep(3)") } }
        #expect(failure?.description.contains("SQLSTATE 57014") == true, "\(String(describing: failure))")
        func limits() throws -> [String] {
            try store.read { session in
                try session.query("SELECT current_setting('statement_timeout'), current_setting('idle_in_transaction_session_timeout')")
                    .map { try $0.decode((String, String).self) }.flatMap { [$0.0, $0.1] }
            }
        }
        #expect(try limits() == ["1s", "1s"])
        // A count for `herald store copy` runs without the limit, which is back afterwards.
        #expect(try store.count(StoreTable.all[0]) == 0)
        #expect(try limits() == ["1s", "1s"])
    }

    @Test func theTimeoutIsReadFromTheConfigurationAndChecked() throws {
        var section = StoreSection()
        section.url = "postgres://herald@127.0.0.1/chats"
        #expect(try section.postgresSettings(environment: [:])?.statementTimeout == .seconds(30))
        section.statementTimeoutSeconds = 2.5
        #expect(try section.postgresSettings(environment: [:])?.statementTimeout == .milliseconds(2_500))
    }
}
