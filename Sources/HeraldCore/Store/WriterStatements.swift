import GRDB

/// The writer connection's hot statements, prepared once and kept, found by the place that runs them
/// and the number of key rows they take instead of by their text.
///
/// GRDB's own cache finds a statement by its SQL: every lookup builds the text (a `VALUES` list of up to
/// ``SQLiteTransaction/maximumRows`` rows) and hashes all of it, about 1,500 instructions for each of
/// the twenty-odd statements a commit runs. A commit of a message or two under a light load paid that
/// on every one (callgrind). Here a lookup is an index into an array.
///
/// Used only on the writer connection's queue, inside its transactions. The statements belong to that
/// connection; they are finalized when this is released, and SQLite keeps a connection that GRDB
/// closed first open until then (`sqlite3_close_v2`).
final class WriterStatements: @unchecked Sendable {
    /// Where a statement is run; one cache line of ``SQLiteTransaction/maximumRows`` + 1 row counts each.
    enum Site: Int, CaseIterable {
        case storedMessages, newestMessages, memberships, readPositions, presence, anyPendingReads, pendingReads
        case unread, rangeSummaries
        case insertMessages, upsertChats, upsertMembers, moveReadPositions, addPendingReads, resolvePendingReads
        case addToCounters, deleteFallenCounters, setPresence, endPresence, insertOutboxPack, addToStoreCounter
        case saveCheckpoint, deleteCheckpoint
    }

    private var slots: [Statement?]
    /// The connection the statements belong to.
    private var connection: ObjectIdentifier?

    init() {
        slots = Array(repeating: nil, count: Site.allCases.count * Self.rowCounts)
    }

    private static var rowCounts: Int { SQLiteTransaction.maximumRows + 1 }

    /// The statement `site` runs with `rows` key rows (0 for one without a `VALUES` list), prepared from
    /// `sql()` the first time on `db`.
    func statement(_ site: Site, rows: Int = 0, in db: Database, sql: () -> String) throws -> Statement {
        guard rows < Self.rowCounts else { return try db.cachedStatement(sql: sql()) }
        if connection != ObjectIdentifier(db) {
            // A statement belongs to one connection: should another come, the kept ones go.
            slots = Array(repeating: nil, count: slots.count)
            connection = ObjectIdentifier(db)
        }
        let slot = site.rawValue * Self.rowCounts + rows
        if let statement = slots[slot] { return statement }
        let statement = try db.makeStatement(sql: sql())
        slots[slot] = statement
        return statement
    }
}
