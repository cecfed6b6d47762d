import Foundation
import GRDB
public import HeraldPluginAPI

extension SQLiteChatStore {
    /// Up to `limit` outbox entries for `sink` after `after`, oldest first.
    public func pendingOutputs(sink: String, after: Int64, limit: Int) throws -> [OutboxEnvelope] {
        try pool.read { db in
            var envelopes: [OutboxEnvelope] = []
            let rows = try Row.fetchCursor(db.cachedStatement(sql: Self.pendingOutputsSQL), arguments: [after, sink, limit])
            // Columns by position: this runs for every output a sink delivers.
            while let row = try rows.next() {
                let sequence: Int64 = row[0]
                let kindName: String = row[2]
                guard let kind = OutputKind(rawValue: kindName) else {
                    throw DatabaseError(message: "outbox row \(sequence) has unknown kind \(kindName)")
                }
                // Copied once, from SQLite's buffer into the envelope (no intermediate `Data`).
                let payload = try row.withUnsafeData(atIndex: 3) { [UInt8]($0 ?? Data()) }
                envelopes.append(OutboxEnvelope(sequence: sequence, recipient: UserID(row[1] as String), kind: kind,
                                                payload: payload, createdAt: Timestamp(milliseconds: row[4]),
                                                attempts: row[5]))
            }
            return envelopes
        }
    }

    /// Removes `sink`'s delivered entries with one range delete over the rowid, from the first delivered
    /// to the last: SQLite has one writer, so sequences follow commit order and every entry of the sink
    /// in that range was delivered (entries below it went in earlier purges). The range holds only what
    /// was queued since the last purge, whatever other sinks have left undelivered below it.
    public func removeOutputs(sink: String, delivered: [Int64]) throws {
        guard let first = delivered.min(), let last = delivered.max() else { return }
        try pool.write { db in
            try db.cachedStatement(sql: Self.removeOutputsSQL).execute(arguments: [first, last, sink])
            try StoreCounter.add(-db.changesCount, to: StoreCounter.outbox(sink), in: db)
        }
    }

    /// One writer: an entry never commits below one a dispatcher has read, so it reads on from its position.
    public var outboxFollowsCommitOrder: Bool { true }

    /// A sink's entries after a sequence, oldest first (after, sink, limit): the rowid range after it.
    static let pendingOutputsSQL = """
        SELECT seq, recipient, kind, payload, created_at, attempts FROM outbox WHERE seq > ? AND sink = ? ORDER BY seq LIMIT ?
        """

    /// Removes a sink's entries in a range of sequences (first, last, sink).
    static let removeOutputsSQL = "DELETE FROM outbox WHERE seq BETWEEN ? AND ? AND sink = ?"

    /// Counts a failed attempt for the entries.
    public func recordFailedAttempt(sink: String, sequences: [Int64]) throws {
        guard !sequences.isEmpty else { return }
        try pool.write { db in
            for sequence in sequences {
                try db.execute(sql: "UPDATE outbox SET attempts = attempts + 1 WHERE seq = ? AND sink = ?", arguments: [sequence, sink])
            }
        }
    }

    /// Dead-lettered inputs, oldest first.
    public func deadLetters(limit: Int, includeReplayed: Bool) throws -> [DeadLetter] {
        try pool.read { db in
            let filter = includeReplayed ? "" : "WHERE replayed_at IS NULL"
            return try Row.fetchAll(db, sql: "SELECT * FROM dead_letters \(filter) ORDER BY id LIMIT ?", arguments: [limit]).map { row in
                let reason = RejectionReason(rawValue: row["reason"]) ?? .malformedJSON
                let raw: Data = row["raw"]
                return DeadLetter(
                    id: row["id"], rejection: Rejection(reason, row["detail"]),
                    provenance: Provenance(adapter: row["adapter"], origin: row["origin"], rawSize: row["raw_size"],
                                           receivedAt: Timestamp(milliseconds: row["received_at"])),
                    raw: [UInt8](raw), replayedAt: (row["replayed_at"] as Int64?).map { Timestamp(milliseconds: $0) })
            }
        }
    }
}

extension SQLiteChatStore {
    /// A source's committed checkpoint.
    public func checkpoint(source: String, key: String) throws -> String? {
        try pool.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM source_checkpoints WHERE source = ? AND key = ?", arguments: [source, key])
        }
    }

    /// Every committed checkpoint of a source (`key: value`), for status pages.
    public func checkpoints(source: String) throws -> [String: String] {
        try pool.read { db in
            var result: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT key, value FROM source_checkpoints WHERE source = ?", arguments: [source]) {
                result[row["key"]] = row["value"]
            }
            return result
        }
    }

    /// Moves an undeliverable output to the dead-letter queue: adapter is the sink, origin names the
    /// recipient and kind, raw is the output's JSON.
    public func deadLetterOutput(_ envelope: OutboxEnvelope, sink: String, rejection: Rejection, at time: Timestamp) throws {
        try pool.write { db in
            // The same dead-letter row, and count of open letters, as a rejected input's.
            let origin = "outbox/\(envelope.sequence) \(envelope.kind.rawValue) for \(envelope.recipient)"
            let provenance = Provenance(adapter: sink, origin: origin, rawSize: envelope.payload.count, receivedAt: time)
            try SQLiteTransaction.insertDeadLetter(NewDeadLetter(rejection: rejection, provenance: provenance, raw: envelope.payload), in: db)
            try StoreCounter.add(1, to: StoreCounter.openDeadLetters, in: db)
            try db.execute(sql: "DELETE FROM outbox WHERE seq = ? AND sink = ?", arguments: [envelope.sequence, sink])
            try StoreCounter.add(-db.changesCount, to: StoreCounter.outbox(sink), in: db)
        }
    }

    /// Removes up to `limit` selected dead letters, oldest first, and takes the open ones among them off
    /// the count of open letters, in one transaction.
    public func purgeDeadLetters(_ selection: DeadLetterSelection, limit: Int) throws -> Int {
        try pool.write { db in
            var arguments = Self.arguments(of: selection)
            _ = arguments.append(contentsOf: [limit])
            let removed = try Row.fetchAll(db, sql: """
                DELETE FROM dead_letters WHERE id IN (
                    SELECT id FROM dead_letters WHERE \(Self.selectionCondition) ORDER BY id LIMIT ?)
                RETURNING replayed_at IS NULL
                """, arguments: arguments)
            let open = removed.filter { $0[0] as Bool }.count
            if open > 0 { try StoreCounter.add(-open, to: StoreCounter.openDeadLetters, in: db) }
            return removed.count
        }
    }

    /// How many dead letters `selection` takes.
    public func deadLetterCount(_ selection: DeadLetterSelection) throws -> Int {
        try pool.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM dead_letters WHERE \(Self.selectionCondition)", arguments: Self.arguments(of: selection)) ?? 0
        }
    }

    /// The condition of a ``DeadLetterSelection`` over `dead_letters`, with ``arguments(of:)``.
    private static let selectionCondition = "(? = 0 OR replayed_at IS NOT NULL) AND (? IS NULL OR received_at < ?) AND (? IS NULL OR adapter = ?)"

    private static func arguments(of selection: DeadLetterSelection) -> StatementArguments {
        [selection.replayedOnly, selection.receivedBefore?.milliseconds, selection.receivedBefore?.milliseconds, selection.adapter, selection.adapter]
    }

    /// Marks a dead-lettered input as replayed successfully (again, if it was already).
    public func markReplayed(deadLetter id: Int64, at time: Timestamp) throws {
        try pool.write { db in
            try db.execute(sql: "UPDATE dead_letters SET replayed_at = ? WHERE id = ? AND replayed_at IS NULL", arguments: [time.milliseconds, id])
            if db.changesCount > 0 {
                try StoreCounter.add(-1, to: StoreCounter.openDeadLetters, in: db)
            } else {
                try db.execute(sql: "UPDATE dead_letters SET replayed_at = ? WHERE id = ?", arguments: [time.milliseconds, id])
            }
        }
    }
}

extension SQLiteChatStore {
    /// Milliseconds since the oldest undelivered output was queued, or `nil` when the outbox is empty: the
    /// first entry in sequence order, one step into the rowid (a metrics scrape reads it).
    public func oldestOutputAge(now: Timestamp) throws -> Int64? {
        try pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT created_at FROM outbox ORDER BY seq LIMIT 1").map { now.milliseconds - $0 }
        }
    }

    /// The newest `limit` messages of a chat, newest first.
    public func recentMessages(chat: ChatID, limit: Int) throws -> [MessageReceived] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, sender, body, sent_at FROM messages WHERE chat = ? ORDER BY sent_at DESC, id DESC LIMIT ?",
                             arguments: [chat.rawValue, limit]).map { row in
                MessageReceived(chat: chat, id: MessageID(row["id"] as String), sender: UserID(row["sender"] as String),
                                body: row["body"], sentAt: Timestamp(milliseconds: row["sent_at"]))
            }
        }
    }

    /// Chats with the most messages received since `since`, among the newest `scanLimit` messages at most
    /// (for status screens, which must answer quickly on any store).
    ///
    /// Messages are stored in arrival order, and `received_at` is the writer's clock at commit, so it
    /// rises with the rowid: a bisection over rowids finds the first message at or after `since` in about
    /// a few dozen lookups, and only the messages after it are read, not the whole table.
    public func busiestChats(since: Timestamp, limit: Int, scanLimit: Int64) throws -> [(chat: ChatID, count: Int)] {
        try pool.read { db in
            guard let newest = try Int64.fetchOne(db, sql: "SELECT max(rowid) FROM messages") else { return [] }
            let first = try Self.firstRowID(receivedAtOrAfter: since, below: newest, in: db)
            return try Row.fetchAll(db, sql: """
                SELECT chat, count(*) AS n FROM messages WHERE rowid >= ? GROUP BY chat ORDER BY n DESC, chat LIMIT ?
                """, arguments: [max(first, newest - scanLimit + 1), limit]).map { (ChatID($0["chat"] as String), $0["n"]) }
        }
    }

    /// The smallest rowid whose message was received at or after `time` (`newest + 1` when none was).
    private static func firstRowID(receivedAtOrAfter time: Timestamp, below newest: Int64, in db: Database) throws -> Int64 {
        let probe = try db.cachedStatement(sql: "SELECT rowid, received_at FROM messages WHERE rowid >= ? ORDER BY rowid LIMIT 1")
        var low: Int64 = 0
        var high = newest + 1
        while low < high {
            let middle = low + (high - low) / 2
            guard let row = try Row.fetchOne(probe, arguments: [middle]) else { high = middle; continue }
            let rowID: Int64 = row[0]
            if (row[1] as Int64) < time.milliseconds { low = rowID + 1 } else { high = middle }
        }
        return low
    }
}
