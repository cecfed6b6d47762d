import GRDB

/// The multi-row inserts the writer flushes before each commit, in statements of up to
/// ``maximumRows`` rows.
///
/// A commit runs dozens of these with the same shape. Their statements are kept per transaction by
/// shape (``SQLiteTransactionCache/bulkStatement(_:rows:in:)``), so the SQL, about 1 KB for a full
/// chunk, is neither rebuilt nor hashed for each chunk.
enum BulkInsert: Hashable {
    case outbox
    case unreadIncrements

    /// Rows per statement at most (SQLite allows 32,766 parameters; 64 rows keep statements small).
    static let maximumRows = 64

    var columns: Int {
        switch self {
        case .outbox: 5
        case .unreadIncrements: 3
        }
    }

    /// The statement for `rows` rows.
    func sql(rows: Int) -> String {
        let placeholder = "(" + Array(repeating: "?", count: columns).joined(separator: ",") + ")"
        let values = Array(repeating: placeholder, count: rows).joined(separator: ",")
        return switch self {
        case .outbox:
            "INSERT INTO outbox(sink, recipient, kind, payload, created_at) VALUES \(values)"
        case .unreadIncrements:
            "INSERT INTO unread(user, chat, count) VALUES \(values) ON CONFLICT(user, chat) DO UPDATE SET count = count + excluded.count"
        }
    }
}

extension SQLiteTransactionCache {
    /// The prepared statement for `rows` rows of `insert`, from GRDB's statement cache once per
    /// transaction and shape.
    func bulkStatement(_ insert: BulkInsert, rows: Int, in db: Database) throws -> Statement {
        let key = BulkStatementKey(insert: insert, rows: rows)
        if let statement = bulkStatements[key] { return statement }
        let statement = try db.cachedStatement(sql: insert.sql(rows: rows))
        bulkStatements[key] = statement
        return statement
    }
}

/// A bulk statement's shape.
struct BulkStatementKey: Hashable {
    var insert: BulkInsert
    var rows: Int
}
