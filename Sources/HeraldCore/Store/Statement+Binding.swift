import GRDB
import GRDBSQLite
import HeraldPluginAPI

extension Statement {
    /// Executes the statement after `bind` has bound its parameters in order, keeping text and bytes in `arena`.
    ///
    /// The hot path binds about twenty values per message. GRDB's `StatementArguments` costs more than
    /// SQLite's own work there: it maps every value through a key path, validates the count and binds
    /// through nested closures. ``StatementBinder`` binds each value straight onto the prepared statement.
    func execute(in arena: BindingArena, _ bind: (inout StatementBinder) throws -> Void) throws {
        try withBindings(in: arena, bind) { try execute() }
    }

    /// Binds the parameters with `bind`, keeping text and bytes in `arena`, runs `body` (which steps the
    /// statement), then clears the bindings before giving the arena's space back, so SQLite never holds a
    /// value that is gone.
    func withBindings<Result>(in arena: BindingArena, _ bind: (inout StatementBinder) throws -> Void,
                              _ body: () throws -> Result) throws -> Result {
        // Resets the statement and clears earlier bindings; GRDB then counts them as valid and bound, so
        // stepping it runs with what `bind` set.
        setUncheckedArguments(StatementArguments())
        let mark = arena.mark
        defer {
            sqlite3_clear_bindings(sqliteStatement)
            arena.release(to: mark)
        }
        var binder = StatementBinder(statement: self, arena: arena)
        try bind(&binder)
        return try body()
    }
}

/// Binds values to a statement's parameters, in order (see ``GRDB/Statement/withBindings(in:_:_:)``).
///
/// Text and bytes are copied once into the transaction's ``BindingArena`` and bound from there without a
/// further copy (`SQLITE_STATIC`). GRDB's binding of a `String` copies it into a new C-string array
/// that SQLite copies again, and a `Data` is one more copy of a payload.
struct StatementBinder {
    let statement: Statement
    private let arena: BindingArena
    private(set) var index: CInt = 1

    init(statement: Statement, arena: BindingArena) {
        self.statement = statement
        self.arena = arena
    }

    /// Binds the next parameter.
    mutating func bind(_ value: some StatementBinding) throws {
        try check(value.bind(to: statement.sqliteStatement, at: index))
    }

    /// Binds the next parameter to `text`.
    mutating func bind(_ text: String) throws {
        var text = text
        let kept = text.withUTF8 { arena.keep(UnsafeRawBufferPointer($0)) }
        guard let start = kept?.assumingMemoryBound(to: CChar.self) else {
            // Empty text still needs an address (SQLite binds text without one as NULL); SQLite copies none.
            return try check(sqlite3_bind_text(statement.sqliteStatement, index, "", 0, Self.transient))
        }
        try check(sqlite3_bind_text(statement.sqliteStatement, index, start, CInt(text.utf8.count), nil))
    }

    /// Binds the next parameter to `bytes`, as a blob.
    mutating func bind(_ bytes: [UInt8]) throws {
        // SQLite binds a blob without an address as NULL.
        guard let start = bytes.withUnsafeBytes({ arena.keep($0) }) else {
            return try check(sqlite3_bind_zeroblob(statement.sqliteStatement, index, 0))
        }
        try check(sqlite3_bind_blob(statement.sqliteStatement, index, start, CInt(bytes.count), nil))
    }

    /// Binds the next parameter to the entries of `pack`, as a blob, written straight into the arena.
    mutating func bind(entriesOf pack: OutboxPack, rows: [OutboxRow]) throws {
        let kept = arena.keep(upTo: pack.entriesSizeBound(of: rows)) { pack.writeEntries(of: rows, into: $0) }
        guard let kept else { return try check(sqlite3_bind_zeroblob(statement.sqliteStatement, index, 0)) }
        try check(sqlite3_bind_blob(statement.sqliteStatement, index, kept.start, CInt(kept.count), nil))
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
