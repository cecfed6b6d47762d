import Foundation
import GRDB

extension SQLiteChatStore {
    /// Rows of a table.
    public func count(_ table: StoreTable) throws -> Int {
        try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table.sqlite)") ?? 0 }
    }

    /// Reads every row of `table` in its order, in chunks of `chunk` rows, from one consistent snapshot.
    public func export(_ table: StoreTable, chunk: Int, _ body: ([[StoreValue]]) throws -> Void) throws {
        try pool.read { db in
            let columns = table.columns.map(\.sqlite).joined(separator: ", ")
            let rows = try Row.fetchCursor(db, sql: "SELECT \(columns) FROM \(table.sqlite) ORDER BY \(table.order)")
            var batch: [[StoreValue]] = []
            batch.reserveCapacity(chunk)
            while let row = try rows.next() {
                batch.append(table.columns.indices.map { index in Self.value(row[index] as DatabaseValue) })
                if batch.count == chunk {
                    try body(batch)
                    batch.removeAll(keepingCapacity: true)
                }
            }
            if !batch.isEmpty { try body(batch) }
        }
    }

    private static func value(_ value: DatabaseValue) -> StoreValue {
        switch value.storage {
        case .null: .null
        case .int64(let integer): .integer(integer)
        case .double(let double): .integer(Int64(double))
        case .string(let text): .text(text)
        case .blob(let data): .bytes([UInt8](data))
        }
    }
}
