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
}
