public import HeraldCore
import PostgresNIO

/// What went wrong with the PostgreSQL store, in one line an operator can act on.
public enum PostgresStoreError: Error, CustomStringConvertible, Sendable {
    /// The server could not be reached or refused the login.
    case unreachable(settings: PostgresStoreSettings, detail: String)
    /// The database's schema is newer than this binary knows.
    case schemaTooNew(found: Int, known: Int)
    /// A statement failed.
    case statement(String)
    /// The server did not answer a statement in time; the connection was closed and is opened anew.
    case noAnswer(after: Duration)

    /// One line: the problem and the fix.
    public var description: String {
        switch self {
        case .unreachable(let settings, let detail):
            "cannot connect to PostgreSQL at \(settings): \(detail) (check store.url, the server, and the password in store.password_file or $\(PostgresStoreSettings.defaultPasswordEnvironment))"
        case .schemaTooNew(let found, let known):
            "the store's schema is version \(found), newer than this Herald knows (\(known)); run a Herald at least as new as the one that migrated it"
        case .statement(let detail): "PostgreSQL statement failed: \(detail)"
        case .noAnswer(let limit):
            "PostgreSQL did not answer within \(limit.components.seconds) s (store.statement_timeout_s and a grace period); the connection was closed and is opened again"
        }
    }

    /// A server error's message and SQLSTATE, or the error's own description.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                return "\(message) (SQLSTATE \(error.serverInfo?[.sqlState] ?? "?"))"
            }
            // A refused or broken connection: the socket's own words say more than the code.
            if let underlying = error.underlying { return "\(error.code): \(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }

    /// Whether the server asked for the transaction to be tried again (serialization failure, deadlock).
    var isRetryable: Bool {
        guard case .statement(let detail) = self else { return false }
        return detail.contains("SQLSTATE 40001") || detail.contains("SQLSTATE 40P01")
    }
}
