import GRDB

/// Row counts kept in the `store_counters` table, in the same transaction as the rows they count.
///
/// `/metrics`, `/v1/status` and the progress log read them on every scrape or tick. Counting the tables
/// instead reads every row (`count(*)` has no shortcut in SQLite): on a large outbox, after a long sink
/// outage say, that took seconds each time.
enum StoreCounter {
    static let messages = "messages"
    static let openDeadLetters = "open_dead_letters"
    /// Undelivered outputs of one sink.
    static func outbox(_ sink: String) -> String { outboxPrefix + sink }
    static let outboxPrefix = "outbox:"

    /// Adds `delta` to the counter `name` (creating it at `delta`).
    static func add(_ delta: Int, to name: String, in db: Database) throws {
        guard delta != 0 else { return }
        try db.cachedStatement(sql: addSQL).execute(arguments: [name, delta])
    }

    /// Adds `delta` to the counter `name` with the writer's kept statement.
    static func add(_ delta: Int, to name: String, in db: Database, statements: WriterStatements) throws {
        guard delta != 0 else { return }
        try statements.statement(.addToStoreCounter, in: db) { addSQL }.execute(arguments: [name, delta])
    }

    private static let addSQL = """
        INSERT INTO store_counters(name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = value + excluded.value
        """
}

extension SQLiteChatStore {
    /// Row counts of committed data, from the counters kept with each write (cheap enough to poll).
    public func statistics() throws -> StoreStatistics {
        try pool.read { db in
            guard try db.tableExists("store_counters") else { return try Self.countRows(in: db) }
            var statistics = StoreStatistics(messages: 0, deadLetters: 0, outbox: 0)
            for row in try Row.fetchAll(db, sql: "SELECT name, value FROM store_counters") {
                let name: String = row[0]
                let value: Int = row[1]
                switch name {
                case StoreCounter.messages: statistics.messages = value
                case StoreCounter.openDeadLetters: statistics.deadLetters = value
                default: if name.hasPrefix(StoreCounter.outboxPrefix) { statistics.outbox += value }
                }
            }
            return statistics
        }
    }

    /// Row counts by counting the tables (reads every row), to check ``statistics()`` against.
    public func recountStatistics() throws -> StoreStatistics {
        try pool.read { db in try Self.countRows(in: db) }
    }

    /// Dead-lettered inputs not yet replayed, from the counter kept with each write.
    public func openDeadLetterCount() throws -> Int {
        try statistics().deadLetters
    }

    /// Undelivered entries per sink (sinks with none are left out).
    public func outboxDepth() throws -> [String: Int] {
        try pool.read { db in
            var depth: [String: Int] = [:]
            if try db.tableExists("store_counters") {
                let rows = try Row.fetchAll(db, sql: "SELECT name, value FROM store_counters WHERE name LIKE ? AND value > 0",
                                            arguments: [StoreCounter.outboxPrefix + "%"])
                for row in rows {
                    let name: String = row[0]
                    depth[String(name.dropFirst(StoreCounter.outboxPrefix.count))] = row[1]
                }
            } else {
                let sql = try db.tableExists("outbox_packs")
                    ? "SELECT sink, sum(outputs - delivered) FROM outbox_packs GROUP BY sink" : "SELECT sink, count(*) FROM outbox GROUP BY sink"
                for row in try Row.fetchAll(db, sql: sql) { depth[row[0]] = row[1] }
            }
            return depth
        }
    }

    /// Counts the rows (the outputs in the packs of a store that keeps them in packs). A store not yet
    /// migrated (opened read-only by a newer binary) has no counters and is counted this way too.
    private static func countRows(in db: Database) throws -> StoreStatistics {
        let outbox = try db.tableExists("outbox_packs")
            ? "SELECT coalesce(sum(outputs - delivered), 0) FROM outbox_packs" : "SELECT count(*) FROM outbox"
        return StoreStatistics(
            messages: try Int.fetchOne(db, sql: "SELECT count(*) FROM messages") ?? 0,
            deadLetters: try Int.fetchOne(db, sql: "SELECT count(*) FROM dead_letters WHERE replayed_at IS NULL") ?? 0,
            outbox: try Int.fetchOne(db, sql: outbox) ?? 0)
    }
}
