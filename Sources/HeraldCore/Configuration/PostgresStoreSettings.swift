import Foundation
public import HeraldPluginAPI

/// Where a PostgreSQL chat store lives and how to reach it, from `store.url` and its companions.
///
/// The URL follows libpq's conventions, `postgres://USER@HOST:PORT/DATABASE?sslmode=MODE&sslrootcert=FILE`
/// (and `sslcert=FILE&sslkey=FILE` for a client certificate, `connect_timeout=SECONDS`), without a password:
/// the password comes from a file or an environment variable, so that neither the configuration nor a log line
/// ever holds it.
public struct PostgresStoreSettings: Sendable, Hashable, CustomStringConvertible {
    /// How the connection is encrypted and verified (libpq's `sslmode`).
    public enum TLSMode: String, Sendable, Hashable, CaseIterable {
        /// Plain TCP.
        case disable
        /// Encrypted, server certificate not verified (unless a CA file is named: then as ``verifyCA``, as in libpq).
        case require
        /// Encrypted, certificate chain verified, host name not.
        case verifyCA = "verify-ca"
        /// Encrypted, certificate chain and host name verified.
        case verifyFull = "verify-full"
    }

    /// The servers to try, in order, until one accepts writes (libpq's `HOST1:PORT1,HOST2:PORT2`): a primary
    /// and its standbys, whichever is the primary now.
    public var endpoints: [Endpoint]
    /// The first server's host.
    public var host: String { endpoints[0].host }
    /// The first server's port.
    public var port: Int { endpoints[0].port }
    /// Role to log in as.
    public var user: String
    /// Database name.
    public var database: String
    /// TLS mode: `verify-full` unless the URL says otherwise, or `disable` for a loopback host.
    public var tls: TLSMode
    /// A PEM file of CA certificates to verify the server against (the system's when `nil`).
    public var rootCertificatePath: String?
    /// A PEM file with the client certificate (and any intermediates) Herald presents, for servers that
    /// authenticate by certificate (`cert` in `pg_hba.conf`); set together with ``clientKeyPath``.
    public var clientCertificatePath: String?
    /// The PEM file of the client certificate's private key.
    public var clientKeyPath: String?
    /// The schema Herald's tables and functions live in (`store.schema`), or `nil` for the server's
    /// `search_path` (usually `public`). Each of Herald's connections sets its `search_path` to it.
    public var schema: String?
    /// The password, if any.
    public var password: Secret?
    /// A file whose first line is the password (`store.password_file`). Each new connection reads it again,
    /// so a rotated password is taken up without a restart; it takes the place of ``password``.
    public var passwordFile: String?
    /// What the server's activity views show for Herald's connections (`pg_stat_activity.application_name`),
    /// each with its role after a slash: `herald/writer`, `herald/reader`, `herald/listener`.
    public var applicationName: String
    /// How long a statement may run, or a transaction sit idle, before it fails: the server cancels it
    /// (`statement_timeout`, `idle_in_transaction_session_timeout`), and Herald closes a connection whose
    /// server has not answered within this time plus a grace period.
    public var statementTimeout: Duration = .seconds(Int64(defaultStatementTimeoutSeconds))
    /// How long one server may take to accept a connection and log Herald in before the next of the list is
    /// tried (libpq's `connect_timeout`, whole seconds).
    public var connectTimeout: Duration = .seconds(Int64(defaultConnectTimeoutSeconds))
    /// `store.durability: normal`: each of Herald's connections sets `synchronous_commit = off`, so a commit
    /// returns before the server has flushed its write-ahead log. A killed Herald loses nothing (the server
    /// has the commit); a server that crashes or loses power may lose its last commits, about 0.6 s of them at
    /// the server's default `wal_writer_delay`. `false` (`full`) leaves the server's own setting alone.
    public var asynchronousCommit = false

    /// The URL without any password: what logs, `herald check` and errors show.
    public var description: String {
        var text = "postgres://\(user)@\(endpoints.map(\.description).joined(separator: ","))/\(database)?sslmode=\(tls.rawValue)"
        if let rootCertificatePath { text += "&sslrootcert=\(rootCertificatePath)" }
        if let clientCertificatePath, let clientKeyPath { text += "&sslcert=\(clientCertificatePath)&sslkey=\(clientKeyPath)" }
        if applicationName != Self.defaultApplicationName { text += "&application_name=\(applicationName)" }
        if connectTimeout != .seconds(Int64(Self.defaultConnectTimeoutSeconds)) { text += "&connect_timeout=\(connectTimeout.components.seconds)" }
        if let schema { text += " (schema \(schema))" }
        return text
    }

    /// Parses a `postgres://` (or `postgresql://`) URL; `password` is looked up separately.
    public init(url text: String, password: Secret? = nil) throws(PostgresSettingsError) {
        let servers = try Self.splitServers(text)
        guard let components = URLComponents(string: servers?.firstOnly ?? text), let scheme = components.scheme,
              scheme == "postgres" || scheme == "postgresql" else {
            throw PostgresSettingsError("store.url must look like postgres://USER@HOST:PORT/DATABASE, got \(Self.redacted(text))")
        }
        guard components.password == nil else {
            throw PostgresSettingsError("store.url must not contain a password; use store.password_file or the environment variable named by store.password_env")
        }
        guard let host = components.host, !host.isEmpty else { throw PostgresSettingsError("store.url names no host") }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty else { throw PostgresSettingsError("store.url names no database (postgres://USER@HOST:PORT/DATABASE)") }
        endpoints = servers?.endpoints ?? [Endpoint(host: host, port: components.port ?? 5432)]
        self.user = components.user ?? "herald"
        self.database = database
        self.password = password
        let query = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        if let mode = query["sslmode"] {
            guard let parsed = TLSMode(rawValue: mode) else {
                throw PostgresSettingsError("store.url: sslmode must be one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", ")), got \(mode)")
            }
            tls = parsed
        } else {
            tls = endpoints.allSatisfy { Self.isLoopback($0.host) } ? .disable : .verifyFull
        }
        rootCertificatePath = query["sslrootcert"]
        clientCertificatePath = query["sslcert"]
        clientKeyPath = query["sslkey"]
        guard (clientCertificatePath == nil) == (clientKeyPath == nil) else {
            throw PostgresSettingsError("store.url: sslcert and sslkey go together (the client certificate and its private key)")
        }
        if clientCertificatePath != nil, tls == .disable {
            throw PostgresSettingsError("store.url: a client certificate needs TLS; add sslmode=verify-full (or require, verify-ca)")
        }
        applicationName = query["application_name"] ?? Self.defaultApplicationName
        // The server keeps 63 bytes of it; the role suffix needs room.
        guard !applicationName.isEmpty, applicationName.utf8.count <= 48, applicationName.utf8.allSatisfy({ (0x20..<0x7f).contains($0) }) else {
            throw PostgresSettingsError("store.url: application_name must be 1 to 48 printable ASCII characters, got \(applicationName)")
        }
        if let seconds = query["connect_timeout"] {
            // libpq waits forever on 0; Herald never does, so that a silent server cannot hold a reconnect.
            guard let value = Int(seconds), (1...3600).contains(value) else {
                throw PostgresSettingsError("store.url: connect_timeout must be whole seconds from 1 to 3600, got \(seconds)")
            }
            connectTimeout = .seconds(value)
        }
        if let attributes = query["target_session_attrs"], !Self.writableSessionAttributes.contains(attributes) {
            throw PostgresSettingsError("""
                store.url: target_session_attrs=\(attributes) cannot work for Herald, which writes: it always looks for a server \
                that accepts writes (read-write, or primary, or leave it out)
                """)
        }
        for name in query.keys.sorted() where !Self.urlParameters.contains(name) {
            throw PostgresSettingsError("store.url: unknown parameter \(name) (known: \(Self.urlParameters.joined(separator: ", ")))")
        }
    }

    /// The channel `NOTIFY` wakes outbox dispatchers on: one per schema, so deployments in different
    /// schemas of one database do not wake each other.
    public var outboxChannel: String { schema.map { "herald_outbox_\($0)" } ?? "herald_outbox" }

    /// Checks a `store.schema` value: a lower-case identifier that needs no quoting, not one of the
    /// server's own (`pg_`), short enough for its outbox channel's name.
    public static func validateSchema(_ name: String) throws(PostgresSettingsError) {
        let valid = name.utf8.count <= 48 && !name.hasPrefix("pg_") && name.utf8.first.map { (0x61...0x7a).contains($0) || $0 == 0x5f } == true
            && name.utf8.allSatisfy { (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5f }
        guard valid else {
            throw PostgresSettingsError("must be a lower-case identifier (a–z, 0–9, _; not starting with a digit or pg_), at most 48 characters, got \(name)")
        }
    }

    static func isLoopback(_ host: String) -> Bool { ListenAddress.isLoopback(host: host) }

    /// `text` with anything between `://` and `@` reduced to the user name.
    static func redacted(_ text: String) -> String {
        guard let start = text.range(of: "://"), let at = text.range(of: "@", range: start.upperBound..<text.endIndex) else { return text }
        let credentials = text[start.upperBound..<at.lowerBound]
        let user = credentials.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
        return text.replacingCharacters(in: start.upperBound..<at.lowerBound, with: user + (credentials.contains(":") ? ":***" : ""))
    }
}

/// A PostgreSQL store setting is wrong; the text names the key and the fix.
public struct PostgresSettingsError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var description: String

    /// Creates the error.
    public init(_ description: String) { self.description = description }

    /// The text without its leading `store.url`, for a configuration error whose key path names it already.
    public var detail: String {
        for key in ["store.url: ", "store.url "] where description.hasPrefix(key) { return String(description.dropFirst(key.count)) }
        return description
    }
}

extension PostgresStoreSettings {
    /// The environment variable the password is read from unless `store.password_env` names another
    /// (libpq's own).
    public static let defaultPasswordEnvironment = "PGPASSWORD"

    /// `store.statement_timeout_s` unless the configuration sets another.
    public static let defaultStatementTimeoutSeconds = 30.0

    /// The application name unless the URL's `application_name` sets another.
    public static let defaultApplicationName = "herald"

    /// The first line of the password file at `path`, or `nil` when it cannot be read.
    public static func readPasswordFile(_ path: String) -> Secret? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return Secret(String(text.split(whereSeparator: \.isNewline).first ?? ""))
    }

    /// `connect_timeout` unless the URL sets another (seconds).
    public static let defaultConnectTimeoutSeconds = 10

    /// The URL parameters Herald reads (libpq's names).
    static let urlParameters = ["sslmode", "sslrootcert", "sslcert", "sslkey", "application_name", "connect_timeout", "target_session_attrs"]

    /// The values of libpq's `target_session_attrs` that ask for what Herald always does: each new connection
    /// keeps the first server that accepts writes. The parameter is accepted so that a URL written for libpq
    /// (a cluster manager's, say) works unchanged.
    static let writableSessionAttributes: Set<String> = ["read-write", "primary"]
}
