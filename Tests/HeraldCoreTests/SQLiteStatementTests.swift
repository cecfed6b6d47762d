import Foundation
import GRDB
@testable import HeraldCore
import HeraldTestKit
import Testing

/// The statements a SQLite commit builds. A commit deletes rows by composite key (resolved pending reads,
/// counters that fell to zero, ended presence); each deletion must search the table's primary key, never
/// scan the table, or every commit would read a whole table that grows with the users and chats.
@Suite("SQLite commit statements")
struct SQLiteStatementTests {
    @Test("a values list has one parenthesised group of parameters per row")
    func valuesList() {
        #expect(SQLiteTransaction.valuesList(rows: 1, columns: 1) == "(?)")
        #expect(SQLiteTransaction.valuesList(rows: 3, columns: 2) == "(?,?),(?,?),(?,?)")
        #expect(SQLiteTransaction.valuesList(rows: 0, columns: 4) == "")
    }

    @Test("every keyed deletion searches its table's primary key", arguments: SQLiteTransaction.KeyedDeletion.allCases)
    func searchesThePrimaryKey(_ deletion: SQLiteTransaction.KeyedDeletion) throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteChatStore(path: directory.path("store.sqlite"), durability: .normal)
        let sql = deletion.sql(values: "(?,?),(?,?),(?,?)")
        let plan = try store.pool.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: StatementArguments(Array(repeating: "k", count: 6)))
                .map { $0["detail"] as String }
        }
        #expect(plan.contains { $0.hasPrefix("SEARCH \(deletion.table) USING PRIMARY KEY") }, "plan: \(plan)")
        #expect(!plan.contains { $0.hasPrefix("SCAN \(deletion.table)") }, "plan: \(plan)")
    }

    @Test("bound text and bytes reach SQLite whole, across the binding arena's blocks and past their size")
    func boundValuesRoundTrip() throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteChatStore(path: directory.path("store.sqlite"), durability: .normal)
        // Small values that fill several blocks, values larger than a block, empty ones and non-ASCII text.
        var texts = (0..<2_000).map { "value-\($0)-" + String(repeating: "é", count: $0 % 40) }
        texts += ["", String(repeating: "x", count: BindingArena.blockSize + 1), "日本語 🎉", String(repeating: "y", count: 3 * BindingArena.blockSize)]
        let blobs = texts.map { Array($0.utf8.reversed()) }
        let arena = BindingArena()
        let stored = try store.pool.write { db -> [(String, [UInt8])] in
            try db.execute(sql: "CREATE TABLE bound(position INTEGER PRIMARY KEY, text TEXT NOT NULL, bytes BLOB)")
            for start in stride(from: 0, to: texts.count, by: 64) {
                let rows = start..<min(start + 64, texts.count)
                try db.makeStatement(sql: "INSERT INTO bound(position, text, bytes) VALUES " + SQLiteTransaction.valuesList(rows: rows.count, columns: 3))
                    .execute(in: arena) { binder in
                        for row in rows {
                            try binder.bind(row)
                            try binder.bind(texts[row])
                            try binder.bind(blobs[row])
                        }
                    }
            }
            return try Row.fetchAll(db, sql: "SELECT text, bytes FROM bound ORDER BY position").map { row in
                (row[0] as String, (row[1] as Data?).map { Array($0) } ?? [])
            }
        }
        #expect(stored.map(\.0) == texts)
        #expect(stored.map(\.1) == blobs)
    }
}
