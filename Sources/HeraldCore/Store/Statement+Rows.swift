import GRDB
import GRDBSQLite

extension Statement {
    /// Steps a query (its parameters, if any, bound by the caller with ``withBindings(in:_:_:)``) and hands
    /// each result row to `body`, which reads it in place; the statement is reset afterwards, whatever
    /// happens, so the next use finds it ready.
    ///
    /// GRDB's row cursor builds a table of the statement's lower-cased column names for every query it
    /// runs, about 5,000 instructions, and a commit of a message or two under a light load runs a dozen
    /// queries (callgrind). The writer's queries read their columns by position, inside its own write
    /// transaction, so they step the statement directly.
    func forEachRow(_ body: (StatementRow) throws -> Void) throws {
        defer { sqlite3_reset(sqliteStatement) }
        let row = StatementRow(statement: self)
        while true {
            switch sqlite3_step(sqliteStatement) {
            case SQLITE_ROW: try body(row)
            case SQLITE_DONE: return
            case let code:
                let message = String(cString: sqlite3_errmsg(sqlite3_db_handle(sqliteStatement)))
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql)
            }
        }
    }
}

/// The row a query is on (``GRDB/Statement/forEachRow(_:)``), read by column position.
struct StatementRow {
    let statement: Statement

    /// The value in `column`; a `NULL` there is an error (the writer's queries read `NOT NULL` columns).
    subscript<Value: StatementColumnConvertible>(_ column: Int) -> Value {
        get throws(DatabaseError) {
            guard let value: Value = optional(column) else {
                throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "NULL in column \(column)", sql: statement.sql)
            }
            return value
        }
    }

    /// The value in `column`, or `nil` for `NULL`.
    func optional<Value: StatementColumnConvertible>(_ column: Int) -> Value? {
        let index = CInt(column)
        guard sqlite3_column_type(statement.sqliteStatement, index) != SQLITE_NULL else { return nil }
        return Value(sqliteStatement: statement.sqliteStatement, index: index)
    }
}
