extension SQLiteTransaction {
    /// The deletions a commit makes by composite key, with their keys bound as `VALUES` rows.
    ///
    /// The rows go inside a subquery, `(a, b) IN (SELECT column1, column2 FROM (VALUES …))`, which SQLite
    /// answers with a primary-key search per key. Written directly as `(a, b) IN (VALUES …)`, the same
    /// condition makes SQLite scan the whole table on every commit: on a store with millions of unread
    /// counters, most commits would read all of them. A test checks each statement's query plan.
    enum KeyedDeletion: CaseIterable {
        /// Pending reads whose message is stored now: keys (chat, message id).
        case resolvedPendingReads
        /// Unread counters that fell to zero or below: keys (user, chat).
        case fallenCounters
        /// Presence that ended: keys (user, chat).
        case endedPresence

        /// The table the rows are deleted from.
        var table: String {
            switch self {
            case .resolvedPendingReads: "pending_reads"
            case .fallenCounters: "unread"
            case .endedPresence: "presence"
            }
        }

        /// The statement for the `(?,?),(?,?)…` rows in `values`.
        func sql(values: String) -> String {
            let match = switch self {
            case .resolvedPendingReads: "(chat, message_id)"
            case .fallenCounters: "count <= 0 AND (user, chat)"
            case .endedPresence: "(user, chat)"
            }
            return "DELETE FROM \(table) WHERE \(match) IN (SELECT column1, column2 FROM (VALUES \(values)))"
        }
    }
}
