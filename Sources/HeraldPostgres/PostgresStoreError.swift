public import HeraldCore
import NIOCore
import PostgresNIO

/// What went wrong with the PostgreSQL store, in one line an operator can act on.
public enum PostgresStoreError: Error, CustomStringConvertible, Sendable {
    /// The server could not be reached or refused the login.
    case unreachable(settings: PostgresStoreSettings, detail: String)
    /// The server accepts no writes on a new connection: a standby (a failover that has not reached
    /// the name Herald connects to yet), or a database set `default_transaction_read_only`.
    case readOnly(settings: PostgresStoreSettings)
    /// None of the servers a list names accepts writes: why, for each.
    case noWritableServer(settings: PostgresStoreSettings, failures: [String])
    /// The database's schema is newer than this binary knows.
    case schemaTooNew(found: Int, known: Int)
    /// The role may not apply the migrations the schema lacks (it may not create tables): they need
    /// the role that owns the schema, through `herald store migrate`.
    case migrationRefused(role: String, pending: [Int], detail: String)
    /// The role lacks privileges the gateway needs on Herald's tables, sequences or functions.
    case missingPrivileges(role: String, missing: [String])
    /// A statement failed.
    case statement(String)
    /// The server did not answer a statement in time; the connection was closed and is opened anew.
    case noAnswer(after: Duration)

    /// One line: the problem and the fix.
    public var description: String {
        switch self {
        case .unreachable(let settings, let detail):
            "cannot connect to PostgreSQL at \(settings): \(Self.plainWords(detail, host: settings.host))"
        case .readOnly(let settings):
            "PostgreSQL at \(settings) \(Self.readOnlyReason); Herald needs the primary"
        case .noWritableServer(let settings, let failures):
            "no PostgreSQL server of \(settings) accepts writes: \(failures.joined(separator: "; "))"
        case .schemaTooNew(let found, let known):
            "the store's schema is version \(found), newer than this Herald knows (\(known)); run a Herald at least as new as the one that migrated it"
        case .migrationRefused(let role, let pending, let detail):
            "the store's schema lacks migration\(pending.count == 1 ? "" : "s") \(pending.map(String.init).joined(separator: ", ")), which role \(role) may not apply (\(detail)); run `herald store migrate` as the role that owns the schema first (docs/store.md#roles)"
        case .missingPrivileges(let role, let missing):
            "role \(role) lacks privileges Herald needs: \(missing.joined(separator: "; ")); grant them as the schema's owner (docs/store.md#roles)"
        case .statement(let detail): "PostgreSQL statement failed: \(detail)"
        case .noAnswer(let limit):
            "PostgreSQL did not answer within \(limit < .seconds(1) ? "\(limit.components.attoseconds / 1_000_000_000_000_000) ms" : "\(limit.components.seconds) s") (store.statement_timeout_s and a grace period); the connection was closed and is opened again"
        }
    }

    /// Why a connection to `endpoint`, one server of several, was given up, in the words of
    /// ``plainWords(_:host:)``.
    func reason(at endpoint: PostgresStoreSettings.Endpoint) -> String {
        switch self {
        case .unreachable(_, let detail): Self.plainWords(detail, host: endpoint.host)
        case .readOnly: Self.readOnlyReason
        default: description
        }
    }

    /// Why a read-only server is refused.
    static let readOnlyReason = "accepts no writes (transaction_read_only is on: a standby, or a database set read-only)"

    /// What a failed connection's detail means and what to check, in words; the TLS library's own words
    /// for a certificate it refused name neither the certificate nor the fix.
    static func plainWords(_ detail: String, host: String) -> String {
        if detail.contains("CERTIFICATE_VERIFY_FAILED") {
            return "the server's certificate is not signed by a CA Herald trusts (set sslrootcert in store.url to the CA's PEM file; without it the system's CAs are trusted)"
        }
        if detail.contains("failedToValidateHostname") {
            return "the server's certificate does not name \(host) (connect by a name the certificate holds, or use sslmode=verify-ca to verify the CA alone)"
        }
        if detail.contains("client certificate") {
            return "\(detail) (set sslcert and sslkey in store.url to a certificate the server's CA signed, whose common name is the role)"
        }
        if detail.hasSuffix("(connect_timeout)") {
            return "\(detail): the server is down, stopped or cut off (check it and the network path; store.url's connect_timeout sets the wait)"
        }
        if detail.contains("TLS setup failed") {
            return "\(detail) (check the files sslrootcert, sslcert and sslkey in store.url name: readable PEM files)"
        }
        return "\(detail) (check store.url, the server, and the password in store.password_file or $\(PostgresStoreSettings.defaultPasswordEnvironment))"
    }

    /// A connection attempt that failed (refused, timed out, TLS, login), in the words of ``describe(_:)``.
    static func connectionFailed(_ settings: PostgresStoreSettings, _ error: any Error) -> PostgresStoreError {
        .unreachable(settings: settings, detail: describe(error))
    }

    /// A server error's message and SQLSTATE, or the error's own description.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                return "\(message) (SQLSTATE \(error.serverInfo?[.sqlState] ?? "?"))"
            }
            if let channel = error.underlying as? ChannelError, case .connectTimeout(let limit) = channel {
                return "no answer within \(limit.nanoseconds / 1_000_000_000) s (connect_timeout)"
            }
            // A connection closed for a reason PostgresNIO wraps again (the server's own error, say, when it
            // ended an idle transaction): that reason's words, not the wrapper's generic text.
            if let inner = error.underlying as? PSQLError { return "\(error.code): \(describe(inner))" }
            // A refused or broken connection: the socket's own words say more than the code.
            if let underlying = error.underlying { return "\(error.code): \(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }

    /// Whether the server refused a statement for want of a privilege.
    var isPermissionDenied: Bool {
        guard case .statement(let detail) = self else { return false }
        return detail.contains("SQLSTATE 42501")
    }

    /// Whether the server refused a write because the session is read-only (SQLSTATE 25006), or the
    /// connection was refused as read-only when it opened.
    var isReadOnly: Bool {
        if case .readOnly = self { return true }
        guard case .statement(let detail) = self else { return false }
        return detail.contains("SQLSTATE 25006")
    }

    /// Whether the transaction is worth trying again from a fresh slice: the server asked for it
    /// (serialization failure, deadlock), or a key refused a row the slice said was not stored (unique
    /// violation: another writer stored it first; ``PostgresWriteFunction/MessageInsert/checkedBySlice``).
    var isRetryable: Bool {
        guard case .statement(let detail) = self else { return false }
        return ["SQLSTATE 40001", "SQLSTATE 40P01", "SQLSTATE 23505"].contains { detail.contains($0) }
    }
}
