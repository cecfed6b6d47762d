import GRDB
import GRDBSQLite

extension Statement {
    /// Executes the statement with `values` bound in order to its `?` parameters.
    ///
    /// The hot path binds about twenty values per message. GRDB's `StatementArguments` costs more
    /// than SQLite's own work there: it maps every value through a key path, validates the count and
    /// binds through nested closures. This binds each value straight onto the prepared statement
    /// through GRDB's public `StatementBinding`, which is the same `sqlite3_bind_*` call GRDB makes.
    func execute(binding values: [any StatementBinding]) throws {
        try execute { binder in
            for value in values { try binder.bind(value) }
        }
    }

    /// Executes the statement after `bind` has bound its parameters in order.
    func execute(_ bind: (inout StatementBinder) throws -> Void) throws {
        // Resets the statement and clears earlier bindings; GRDB then counts them as valid and bound,
        // so `execute()` below steps the statement with what `bind` set.
        setUncheckedArguments(StatementArguments())
        var binder = StatementBinder(statement: self)
        try bind(&binder)
        try execute()
    }
}

/// Binds values to a statement's parameters, in order (see ``GRDB/Statement/execute(_:)``).
///
/// Text and bytes are handed to SQLite straight from their own storage, which SQLite copies
/// (`SQLITE_TRANSIENT`). GRDB's binding of a `String` first copies it into a new C-string array, and a
/// `Data` is one more copy of a payload: at about twenty values per message those copies cost more
/// than SQLite's own work of taking the values.
struct StatementBinder {
    let statement: Statement
    private(set) var index: CInt = 1

    init(statement: Statement) { self.statement = statement }

    /// Binds the next parameter.
    mutating func bind(_ value: some StatementBinding) throws {
        try check(value.bind(to: statement.sqliteStatement, at: index))
    }

    /// Binds the next parameter to `text`.
    mutating func bind(_ text: String) throws {
        var text = text
        let statement = statement.sqliteStatement, index = index
        try check(text.withUTF8 { bytes in
            guard let start = bytes.baseAddress else { return sqlite3_bind_text(statement, index, "", 0, Self.transient) }
            return sqlite3_bind_text(statement, index, UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self), CInt(bytes.count),
                                     Self.transient)
        })
    }

    /// Binds the next parameter to `bytes`, as a blob.
    mutating func bind(_ bytes: [UInt8]) throws {
        let statement = statement.sqliteStatement, index = index
        try check(bytes.withUnsafeBytes { buffer in
            // SQLite binds a blob without an address as NULL.
            guard let start = buffer.baseAddress else { return sqlite3_bind_zeroblob(statement, index, 0) }
            return sqlite3_bind_blob(statement, index, start, CInt(buffer.count), Self.transient)
        })
    }

    /// SQLite copies the value before the call returns (`SQLITE_TRANSIENT`, which C spells as -1).
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    private mutating func check(_ code: CInt) throws {
        guard code == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "binding parameter \(index) failed", sql: statement.sql)
        }
        index += 1
    }
}
