import Foundation
import GRDB

extension SQLiteChatStore {
    /// Rows of a table (of the outbox: its undelivered outputs).
    public func count(_ table: StoreTable) throws -> Int {
        let sql = table.holdsOutputs
            ? "SELECT coalesce(sum(outputs - delivered), 0) FROM outbox_packs" : "SELECT count(*) FROM \(table.sqlite)"
        return try pool.read { db in try Int.fetchOne(db, sql: sql) ?? 0 }
    }

    /// Reads every row of `table` in its order, in chunks of `chunk` rows, from one consistent snapshot;
    /// the outbox an undelivered output a row.
    public func export(_ table: StoreTable, chunk: Int, _ body: ([[StoreValue]]) throws -> Void) throws {
        if table.holdsOutputs { return try exportOutbox(chunk: chunk, body) }
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

    /// The undelivered outputs in sequence order, with the columns of ``StoreTable``'s outbox: sink,
    /// recipient, kind, payload, created_at and attempts (the failed deliveries of a pack's first
    /// undelivered output).
    private func exportOutbox(chunk: Int, _ body: ([[StoreValue]]) throws -> Void) throws {
        try pool.read { db in
            let packs = try Row.fetchCursor(db, sql: "SELECT sink, created_at, delivered, attempts, entries, seq FROM outbox_packs ORDER BY seq")
            var batch: [[StoreValue]] = []
            while let pack = try packs.next() {
                let sink: String = pack[0], createdAt: Int64 = pack[1], delivered: Int = pack[2], attempts: Int64 = pack[3]
                let entries = try pack.withUnsafeData(atIndex: 4) { data in
                    try (data ?? Data()).withUnsafeBytes { bytes in
                        do { return try OutboxPack.entries(bytes, from: delivered) } catch {
                            throw DatabaseError(message: "outbox pack \(pack[5] as Int64): \(error)")
                        }
                    }
                }
                for (position, entry) in entries {
                    batch.append([.text(sink), .text(entry.recipient), .text(entry.kind), .bytes(entry.payload), .integer(createdAt),
                                  .integer(position == delivered ? attempts : 0)])
                    if batch.count == chunk {
                        try body(batch)
                        batch.removeAll(keepingCapacity: true)
                    }
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
