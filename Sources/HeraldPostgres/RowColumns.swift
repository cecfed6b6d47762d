import PostgresNIO

/// Reads a row's columns in order, each decoded as the type asked for.
///
/// postgres-nio's tuple decode (`row.decode((Int, String?, …).self)`) walks a parameter pack whose type
/// metadata the runtime looks up again for every row. Profiled on commits of 10 messages to 5-member
/// groups, decoding the slice and counter rows that way took about 13% of Herald's CPU; cell by cell, with
/// each decode specialised for its type, about 3%. Used where a commit or an outbox read decodes rows.
struct RowColumns {
    private var cells: PostgresRow.Iterator

    /// Starts at the row's first column.
    init(_ row: PostgresRow) {
        cells = row.makeIterator()
    }

    /// The next column, decoded as `Value`.
    mutating func next<Value: PostgresDecodable>(_: Value.Type = Value.self) throws -> Value {
        guard let cell = cells.next() else { throw PostgresStoreError.statement("a row has fewer columns than the statement reads") }
        return try cell.decode(Value.self)
    }
}
