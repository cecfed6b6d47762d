import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldPostgres
import HeraldTestKit
import Logging
import Testing

/// The PostgreSQL store over real TLS: a cluster serving a certificate for `localhost` made in the test,
/// admitting loopback connections only over TLS 1.2 or newer (``PostgresCluster/tlsAccessRules``).
@Suite("PostgreSQL store over TLS")
struct PostgresTLSTests {
    static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// One TLS cluster for the suite's tests, with its certificates.
    final class World: Sendable {
        let directory: TemporaryDirectory
        let certificates: TestCertificates
        let cluster: PostgresCluster

        init() async throws {
            directory = try TemporaryDirectory(prefix: "herald-postgres-tls")
            try directory.removeAfterExit()
            certificates = try await TestCertificates(in: directory)
            cluster = try await PostgresCluster(tls: certificates)
            try await cluster.psql(database: "postgres", "CREATE DATABASE \(PostgresCluster.certificateDatabase)")
        }

        /// A store URL for `database` on this cluster, with `parameters` after `?`.
        func url(host: String = "localhost", database: String, _ parameters: String) -> String {
            "postgres://\(cluster.user)@\(host):\(cluster.port)/\(database)?\(parameters)"
        }
    }

    static let world = Task { try await World() }

    /// Opens a store at `url`; returns the error's one line if it fails.
    func open(_ url: String) async -> (store: PostgresChatStore?, error: String?) {
        do {
            return (try await offCooperativePool { try PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: Self.logger) }, nil)
        } catch {
            return (nil, "\(error)")
        }
    }

    @Test func verifyFullConnectsOverTLS12OrNewerAndTheServerSeesIt() async throws {
        let world = try await Self.world.value
        let database = try await world.cluster.createDatabase().split(separator: "/").last.map(String.init) ?? ""
        let opened = await open(world.url(database: database, "sslmode=verify-full&sslrootcert=\(world.certificates.caFile)&application_name=tls_full"))
        let store = try #require(opened.store, "\(opened.error ?? "")")
        #expect(try store.badge(for: "bob").unread == 0)
        let sessions = try await world.cluster.psql(database: "postgres", """
            SELECT a.application_name || ' ' || s.ssl || ' ' || s.version FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
            WHERE a.application_name LIKE 'tls_full/%' ORDER BY 1
            """).split(separator: "\n").map(String.init)
        #expect(!sessions.isEmpty && sessions.allSatisfy { $0.hasPrefix("tls_full/") && ($0.hasSuffix(" true TLSv1.3") || $0.hasSuffix(" true TLSv1.2")) },
                "\(sessions)")
    }

    @Test func aServerThatCannotProveItselfIsRefusedWithOneLine() async throws {
        let world = try await Self.world.value
        let database = try await world.cluster.createDatabase().split(separator: "/").last.map(String.init) ?? ""
        let ca = world.certificates.caFile, other = world.certificates.otherCAFile
        // Signed by a CA Herald was not told to trust.
        let wrongCA = await open(world.url(database: database, "sslmode=verify-full&sslrootcert=\(other)"))
        #expect(wrongCA.store == nil && wrongCA.error?.contains("cannot connect to PostgreSQL at postgres://herald@localhost") == true
                && wrongCA.error?.contains("the server's certificate is not signed by a CA Herald trusts (set sslrootcert") == true, "\(wrongCA.error ?? "connected")")
        // The right CA, but the certificate names localhost, not the address Herald dialled.
        let wrongName = await open(world.url(host: "127.0.0.1", database: database, "sslmode=verify-full&sslrootcert=\(ca)"))
        #expect(wrongName.store == nil && wrongName.error?.contains("cannot connect to PostgreSQL") == true
                && wrongName.error?.contains("the server's certificate does not name 127.0.0.1") == true, "\(wrongName.error ?? "connected")")
        // What each weaker mode gives up, as libpq's: verify-ca skips the name; require skips the chain too,
        // unless a CA file is named.
        #expect(await open(world.url(host: "127.0.0.1", database: database, "sslmode=verify-ca&sslrootcert=\(ca)")).store != nil)
        #expect(await open(world.url(host: "127.0.0.1", database: database, "sslmode=require")).store != nil)
        let requireWrongCA = await open(world.url(host: "127.0.0.1", database: database, "sslmode=require&sslrootcert=\(other)"))
        #expect(requireWrongCA.error?.contains("the server's certificate is not signed by a CA Herald trusts") == true, "\(requireWrongCA.error ?? "connected")")
        #expect(await open(world.url(host: "127.0.0.1", database: database, "sslmode=require&sslrootcert=\(ca)")).store != nil)
        // Without TLS the server refuses (its rules admit loopback only over TLS).
        let plain = await open(world.url(host: "127.0.0.1", database: database, "sslmode=disable"))
        #expect(plain.error?.contains("no encryption") == true, "\(plain.error ?? "connected")")
    }

    /// A server that authenticates by client certificate (`cert` in `pg_hba.conf`): the gateway presents
    /// the one `sslcert` and `sslkey` name, and `herald` commands run with it.
    @Test func aClientCertificateLogsTheGatewayIn() async throws {
        let world = try await Self.world.value
        let certificates = world.certificates
        let database = PostgresCluster.certificateDatabase
        let without = await open(world.url(database: database, "sslmode=verify-full&sslrootcert=\(certificates.caFile)"))
        #expect(without.error?.contains("connection requires a valid client certificate (SQLSTATE 28000) (set sslcert and sslkey") == true, "\(without.error ?? "connected")")

        let url = world.url(database: database, "sslmode=verify-full&sslrootcert=\(certificates.caFile)"
                            + "&sslcert=\(certificates.clientCertFile)&sslkey=\(certificates.clientKeyFile)")
        let unreadable = await open(url.replacingOccurrences(of: certificates.clientKeyFile, with: certificates.clientKeyFile + ".missing"))
        #expect(unreadable.error?.contains("TLS setup failed") == true && unreadable.error?.contains("(check the files sslrootcert, sslcert and sslkey") == true,
                "\(unreadable.error ?? "connected")")
        let fixture = try await GatewayFixture(storeURL: url)
        let check = try await fixture.cli(["check"])
        #expect(check.status == 0 && check.output.contains("sslcert=\(certificates.clientCertFile)&sslkey=\(certificates.clientKeyFile)"), "\(check.output)")
        try await fixture.startHerald()
        let client = try await TestMQTTClient(port: fixture.broker.port)
        try client.publish("chats/c1/messages", messageJSON(id: "m1", from: "alice", to: ["bob"]))
        try await eventually("bob's badge from the store Herald reaches by certificate") {
            let badge = try await fixture.cli(["badge", "bob"])
            return badge.status == 0 && badge.output.contains(#""unread":1"#)
        }
        try await client.close()
    }
}
