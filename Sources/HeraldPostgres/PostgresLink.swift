import Foundation
import HeraldCore
import HeraldPluginAPI
import Logging
import CoreMetrics
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

/// One PostgreSQL connection used by one caller at a time, opened on first use and opened again after
/// it broke. Callers block on NIO futures: the store's interface is synchronous (the router commits
/// on its source's own thread), so no Swift concurrency thread waits here on another.
///
/// `@unchecked Sendable`: `connection` is read and written only while `lock` is held.
final class PostgresLink: @unchecked Sendable {
    private let settings: PostgresStoreSettings
    private let role: String
    private let logger: Logger
    private let group: any EventLoopGroup
    private let lock = NSLock()
    private var connection: PostgresConnection?
    /// Watches `connection`'s statements; replaced with it.
    private var watchdog: StatementWatchdog?
    /// The server of the settings' list that the last connection reached.
    private var lastEndpoint: PostgresStoreSettings.Endpoint?
    private let metrics: StoreConnectionMetrics

    /// A link for `role` (`writer`, `reader`), which the server's activity views show after the
    /// application name, and which labels its connections' metrics.
    init(settings: PostgresStoreSettings, role: String, logger: Logger, metrics: any MetricsFactory = NOOPMetricsHandler.instance,
         group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.settings = settings
        self.role = role
        self.logger = logger
        self.metrics = StoreConnectionMetrics(factory: metrics, role: role)
        self.group = group
    }

    /// Runs `body` with the connection held; a connection that broke meanwhile is replaced first. Each
    /// statement is given the settings' statement timeout plus ``answerGrace(after:)`` to answer, after which
    /// the connection is closed and the statement fails; `unlimited` lifts that (migrations).
    func withConnection<T>(unlimited: Bool = false, _ body: (PostgresSession) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        let opened = try open()
        let session = PostgresSession(connection: opened.connection, logger: logger, watchdog: unlimited ? nil : opened.watchdog)
        do {
            guard unlimited else { return try body(session) }
            try session.limitStatements(to: nil)
            // Should this fail, the connection is broken, and a new one gets the limit when it opens.
            defer { try? session.limitStatements(to: settings.statementTimeout) }
            return try body(session)
        } catch {
            // A server that turned read-only (a primary demoted under it) stays so on this connection;
            // the next one may reach the new primary.
            if let error = error as? PostgresStoreError, error.isReadOnly, !session.connection.isClosed {
                try? session.connection.close().wait()
            }
            if session.connection.isClosed || session.watchdog?.tripped == true { dropConnection() }
            throw error
        }
    }

    /// Closes the connection.
    func close() {
        lock.lock()
        defer { lock.unlock() }
        watchdog?.stop()
        watchdog = nil
        try? connection?.close().wait()
        dropConnection()
    }

    /// Forgets the connection (closed, broken, or given up on), and says so in the metrics.
    private func dropConnection() {
        if connection != nil, let lastEndpoint { metrics.closed(lastEndpoint) }
        connection = nil
    }

    /// The open connection, or a new one to the first of the settings' servers that accepts writes.
    private func open() throws -> (connection: PostgresConnection, watchdog: StatementWatchdog) {
        if let connection, let watchdog, !connection.isClosed, !watchdog.tripped { return (connection, watchdog) }
        dropConnection()
        watchdog?.stop()
        watchdog = nil
        guard settings.endpoints.count > 1 else {
            let opened = try open(settings.endpoints[0])
            lastEndpoint = settings.endpoints[0]
            return opened
        }
        var failures: [String] = []
        for endpoint in settings.endpoints {
            do {
                let opened = try open(endpoint)
                if let lastEndpoint, lastEndpoint != endpoint, role == "writer" {
                    logger.warning("PostgreSQL: writing to another server of the list now (a failover?).", metadata: [
                        "from": "\(lastEndpoint)", "to": "\(endpoint)", "skipped": "\(failures.joined(separator: "; "))",
                    ])
                }
                lastEndpoint = endpoint
                return opened
            } catch let error as PostgresStoreError {
                failures.append("\(endpoint): \(error.reason(at: endpoint))")
            }
        }
        throw PostgresStoreError.noWritableServer(settings: settings, failures: failures)
    }

    private func open(_ endpoint: PostgresStoreSettings.Endpoint) throws -> (connection: PostgresConnection, watchdog: StatementWatchdog) {
        let configuration = try Self.configuration(settings, endpoint: endpoint, role: role)
        let opened: PostgresConnection
        do {
            opened = try PostgresConnection.connect(on: group.next(), configuration: configuration, id: 1, logger: logger).wait()
        } catch {
            let refused = PostgresStoreError.connectionFailed(settings, error)
            metrics.refused(endpoint, refused)
            throw refused
        }
        let watching = StatementWatchdog(watching: opened, limit: answerTimeout)
        do {
            let session = PostgresSession(connection: opened, logger: logger, watchdog: watching)
            try session.limitStatements(to: settings.statementTimeout)
            if let schema = settings.schema { try session.query("SELECT set_config('search_path', \(schema), false)") }
            if settings.asynchronousCommit { try session.query("SELECT set_config('synchronous_commit', 'off', false)") }
            // A standby, or a database set read-only: every commit would fail here until the connection closed.
            try session.refuseIfReadOnly(settings)
        } catch {
            // Closed before the watchdog lets go of it: a connection must be closed when its last reference goes.
            try? opened.close().wait()
            watching.stop()
            metrics.refused(endpoint, error)
            throw error
        }
        connection = opened
        watchdog = watching
        metrics.opened(endpoint)
        return (opened, watching)
    }

    /// The password for a new connection: the password file's first line as it is now (a rotated password
    /// needs no restart), else the settings' password.
    static func password(_ settings: PostgresStoreSettings) throws -> String? {
        guard let file = settings.passwordFile else { return settings.password?.value }
        guard let secret = PostgresStoreSettings.readPasswordFile(file) else {
            throw PostgresStoreError.unreachable(settings: settings, detail: "cannot read the password file \(file)")
        }
        return secret.value
    }

    /// How long a statement may go unanswered: the statement timeout and ``answerGrace(after:)``.
    private var answerTimeout: Duration { settings.statementTimeout + Self.answerGrace(after: settings.statementTimeout) }

    /// How long past the statement timeout Herald waits for the server's own cancellation before it
    /// gives up on a server that does not answer at all (a network partition, a hung host): as long
    /// again, at most 5 s.
    static func answerGrace(after timeout: Duration) -> Duration { min(timeout, .seconds(5)) }

    /// How to connect to `endpoint`, one of the servers the settings name (TLS as configured, its host name
    /// verified under `verify-full`, the settings' connect timeout for the connection and the login), as
    /// `APPLICATION/ROLE` in the server's activity views.
    static func configuration(_ settings: PostgresStoreSettings, endpoint: PostgresStoreSettings.Endpoint,
                              role: String) throws -> PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            host: endpoint.host, port: endpoint.port, username: settings.user, password: try password(settings),
            database: settings.database, tls: try tls(settings))
        configuration.options.connectTimeout = TimeAmount(settings.connectTimeout)
        // Only the name goes in the start-up packet: poolers such as PgBouncer refuse other parameters there.
        configuration.options.additionalStartupParameters = [("application_name", "\(settings.applicationName)/\(role)")]
        return configuration
    }

    private static func tls(_ settings: PostgresStoreSettings) throws -> PostgresConnection.Configuration.TLS {
        guard settings.tls != .disable else { return .disable }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        switch settings.tls {
        case .disable: break
        // As libpq: `require` with a CA file named verifies the chain, as `verify-ca` does.
        case .require: tls.certificateVerification = settings.rootCertificatePath == nil ? .none : .noHostnameVerification
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        if let path = settings.rootCertificatePath { tls.trustRoots = .file(path) }
        do {
            if let certificate = settings.clientCertificatePath, let key = settings.clientKeyPath {
                tls.certificateChain = try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) }
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
            }
            return .require(try NIOSSLContext(configuration: tls))
        } catch {
            throw PostgresStoreError.unreachable(settings: settings, detail: "TLS setup failed: \(error)")
        }
    }
}

/// A held connection: runs statements, blocking, and counts them.
struct PostgresSession {
    let connection: PostgresConnection
    let logger: Logger
    /// Closes the connection under a statement unanswered for too long (`nil`: no limit).
    let watchdog: StatementWatchdog?
    private let counter = StatementCounter()

    init(connection: PostgresConnection, logger: Logger, watchdog: StatementWatchdog? = nil) {
        self.connection = connection
        self.logger = logger
        self.watchdog = watchdog
    }

    /// Statements sent through this session.
    var statements: Int { counter.count }

    /// Runs a statement and returns its rows.
    @discardableResult
    func query(_ query: PostgresQuery) throws -> PostgresQueryResult {
        try answer(to: send(query))
    }

    /// Sends a statement without waiting for its answer, so the caller can work while the server runs it;
    /// ``answer(to:)`` then waits for it. The next statement on the session is sent after that wait.
    func send(_ query: PostgresQuery) -> SentStatement {
        counter.count += 1
        guard let watchdog else { return SentStatement(answer: connection.query(query, logger: logger)) }
        let answer = connection.eventLoop.makePromise(of: PostgresQueryResult.self)
        watchdog.begin(answering: answer)
        // A promise already failed by the watchdog ignores the connection's late answer.
        connection.query(query, logger: logger).cascade(to: answer)
        return SentStatement(answer: answer.futureResult)
    }

    /// Waits for the answer to a statement ``send(_:)`` sent: its rows, or the error it failed with.
    func answer(to statement: SentStatement) throws -> PostgresQueryResult {
        defer { watchdog?.end() }
        do {
            return try statement.answer.wait()
        } catch {
            if let watchdog, watchdog.tripped { throw PostgresStoreError.noAnswer(after: watchdog.limit) }
            throw PostgresStoreError.statement(PostgresStoreError.describe(error))
        }
    }

    /// Sets how long the server lets a statement run, or a transaction sit idle, before it ends it
    /// (`nil`: no limit). The idle limit matters with several instances: a transaction whose client went
    /// silent would hold its chat locks, and every other instance's commits on those chats, until then.
    func limitStatements(to limit: Duration?) throws {
        let milliseconds = limit.map { "\(max(1, $0.nanoseconds / 1_000_000))" } ?? "0"
        try query("SELECT set_config('statement_timeout', \(milliseconds), false), set_config('idle_in_transaction_session_timeout', \(milliseconds), false)")
    }

    /// Runs a statement whose first column is a boolean; `true` only when its first row says so.
    func isTrue(_ query: PostgresQuery) throws -> Bool {
        try self.query(query).map { try $0.decode(Bool.self) }.first == true
    }

    /// Throws ``PostgresStoreError/readOnly(settings:)`` when the session accepts no writes: a standby, a
    /// database set read-only, or a primary demoted in place.
    func refuseIfReadOnly(_ settings: PostgresStoreSettings) throws {
        if try isTrue("SELECT current_setting('transaction_read_only') = 'on'") { throw PostgresStoreError.readOnly(settings: settings) }
    }

    /// Runs a statement and returns how many rows it changed.
    @discardableResult
    func execute(_ query: PostgresQuery) throws -> Int {
        try self.query(query).metadata.rows ?? 0
    }
}

/// A statement sent on a session whose answer has not been waited for yet (``PostgresSession/send(_:)``).
struct SentStatement {
    let answer: EventLoopFuture<PostgresQueryResult>
}

/// Counts statements of one session (a class so a session value can count).
final class StatementCounter {
    var count = 0
}
