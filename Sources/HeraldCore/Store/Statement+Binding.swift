import GRDB

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
struct StatementBinder {
    let statement: Statement
    private(set) var index: CInt = 1

    init(statement: Statement) { self.statement = statement }

    /// Binds the next parameter.
    mutating func bind(_ value: some StatementBinding) throws {
        let code = value.bind(to: statement.sqliteStatement, at: index)
        guard code == ResultCode.SQLITE_OK.rawValue else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code),
                                message: "binding parameter \(index) failed", sql: statement.sql)
        }
        index += 1
    }
}
