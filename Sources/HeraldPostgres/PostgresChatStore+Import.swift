public import HeraldCore
import NIOCore
import PostgresNIO

extension PostgresChatStore {
    /// Rows of a table, counted however long that takes (no statement timeout).
    public func count(_ table: StoreTable) throws -> Int {
        try read(unlimited: true) { session in
            try session.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table.postgres)")).map { try $0.decode(Int.self) }.first ?? 0
        }
    }

    /// Inserts rows of `table` (as ``SQLiteChatStore/export(_:chunk:_:)`` reads them) in one statement.
    public func importRows(_ table: StoreTable, _ rows: [[StoreValue]]) throws {
        guard !rows.isEmpty else { return }
        var bindings = PostgresBindings()
        var selected: [String] = []
        for (index, column) in table.columns.enumerated() {
            let values = rows.map { $0[index] }
            switch column.kind {
            case .text:
                bindings.append(values.map { if case .text(let text) = $0 { text } else { "" } })
                selected.append("$\(index + 1)::text[]")
            case .integer, .boolean, .optionalInteger:
                bindings.append(values.map { if case .integer(let number) = $0 { number } else { Int64.min } })
                selected.append("$\(index + 1)::int8[]")
            case .bytes:
                bindings.append(values.map { value -> ByteBuffer in
                    switch value {
                    case .bytes(let bytes): ByteBuffer(bytes: bytes)
                    case .text(let text): ByteBuffer(string: text)
                    default: ByteBuffer()
                    }
                })
                selected.append("$\(index + 1)::bytea[]")
            }
        }
        let names = table.columns.map(\.postgres)
        let converted = zip(names, table.columns).map { name, column in
            switch column.kind {
            case .boolean: "\(name) <> 0"
            case .optionalInteger: "NULLIF(\(name), \(Int64.min))"
            case .text, .integer, .bytes: name
            }
        }
        let sql = """
            INSERT INTO \(table.postgres) (\(names.joined(separator: ", ")))
            SELECT \(converted.joined(separator: ", ")) FROM unnest(\(selected.joined(separator: ", "))) AS k(\(names.joined(separator: ", ")))
            """
        _ = try writer.withConnection { session in try session.execute(PostgresQuery(unsafeSQL: sql, binds: bindings)) }
    }
}
