import Foundation
import GRDB
public import HeraldPluginAPI

extension SQLiteChatStore {
    /// Up to `limit` outbox entries for `sink` after `after`, oldest first: the packs from the one `after`
    /// is in, each from its first undelivered output on.
    public func pendingOutputs(sink: String, after: Int64, limit: Int) throws -> [OutboxEnvelope] {
        let cursor = OutboxPack.place(of: after)
        return try pool.read { db in
            var envelopes: [OutboxEnvelope] = []
            // Every pack holds an output to deliver, but the cursor's own may hold no more after it: one more.
            let packs = try Row.fetchCursor(db.cachedStatement(sql: Self.pendingOutputsSQL), arguments: [cursor.pack, sink, limit + 1])
            while envelopes.count < limit, let row = try packs.next() {
                let seq: Int64 = row[0], delivered: Int = row[1], createdAt: Int64 = row[2], attempts: Int = row[3]
                let first = max(delivered, seq == cursor.pack ? cursor.position + 1 : 0)
                let entries = try row.withUnsafeData(atIndex: 4) { data in
                    try (data ?? Data()).withUnsafeBytes { bytes in
                        do {
                            return try OutboxPack.entries(bytes, from: first, limit: limit - envelopes.count)
                        } catch {
                            throw DatabaseError(message: "outbox pack \(seq): \(error)")
                        }
                    }
                }
                for (position, entry) in entries where envelopes.count < limit {
                    let sequence = OutboxPack.sequence(pack: seq, position: position)
                    guard let kind = OutputKind(rawValue: entry.kind) else {
                        throw DatabaseError(message: "outbox entry \(sequence) has unknown kind \(entry.kind)")
                    }
                    envelopes.append(OutboxEnvelope(sequence: sequence, recipient: UserID(entry.recipient), kind: kind,
                                                    payload: entry.payload, createdAt: Timestamp(milliseconds: createdAt),
                                                    attempts: position == delivered ? attempts : 0))
                }
            }
            return envelopes
        }
    }

    /// Marks `sink`'s delivered outputs. SQLite has one writer, so sequences follow commit order and a sink's
    /// outputs are delivered in that order: every pack of the sink from the first delivered output's to the
    /// one before the last's is delivered whole and goes (packs below went in earlier purges, whatever
    /// other sinks have left undelivered among them); the last one goes too if its last output was
    /// delivered, or else keeps how many at its front are. The count of queued outputs falls by what
    /// this removed, so a purge that runs twice counts once.
    public func removeOutputs(sink: String, delivered: [Int64]) throws {
        guard let first = delivered.min(), let last = delivered.max() else { return }
        let from = OutboxPack.place(of: first).pack, through = OutboxPack.place(of: last)
        try writeDurably { db in
            var removed = 0
            if from < through.pack {
                let gone = try Int.fetchAll(db.cachedStatement(sql: Self.removePacksSQL), arguments: [from, through.pack - 1, sink])
                removed += gone.reduce(0, +)
            }
            if let pack = try Row.fetchOne(db.cachedStatement(sql: "SELECT outputs, delivered FROM outbox_packs WHERE seq = ? AND sink = ?"),
                                           arguments: [through.pack, sink]) {
                let outputs: Int = pack[0], before: Int = pack[1]
                let now = min(outputs, through.position + 1)
                if now >= outputs {
                    try db.cachedStatement(sql: "DELETE FROM outbox_packs WHERE seq = ?").execute(arguments: [through.pack])
                } else if now > before {
                    try db.cachedStatement(sql: "UPDATE outbox_packs SET delivered = ?, attempts = 0 WHERE seq = ?")
                        .execute(arguments: [now, through.pack])
                }
                removed += max(0, now - before)
            }
            try StoreCounter.add(-removed, to: StoreCounter.outbox(sink), in: db)
        }
    }

    /// One writer: an entry never commits below one a dispatcher has read, so it reads on from its position.
    public var outboxFollowsCommitOrder: Bool { true }

    /// A sink's packs from one on, oldest first (pack, sink, limit): the rowid range from it.
    static let pendingOutputsSQL = """
        SELECT seq, delivered, created_at, attempts, entries FROM outbox_packs WHERE seq >= ? AND sink = ? ORDER BY seq LIMIT ?
        """

    /// Removes a sink's packs in a range of sequences (first, last, sink), returning the outputs each held
    /// still undelivered.
    static let removePacksSQL = "DELETE FROM outbox_packs WHERE seq BETWEEN ? AND ? AND sink = ? RETURNING outputs - delivered"

    /// Counts a failed delivery of the first undelivered output of each pack.
    public func recordFailedAttempt(sink: String, sequences: [Int64]) throws {
        let packs = Set(sequences.map { OutboxPack.place(of: $0).pack })
        guard !packs.isEmpty else { return }
        try writeDurably { db in
            for pack in packs.sorted() {
                try db.execute(sql: "UPDATE outbox_packs SET attempts = attempts + 1 WHERE seq = ? AND sink = ?", arguments: [pack, sink])
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
    /// recipient and kind, raw is the output's JSON. The output is its pack's first undelivered one (the
    /// dispatcher removed what it delivered before it): the pack goes if it was the last, else its
    /// delivered count moves past it.
    public func deadLetterOutput(_ envelope: OutboxEnvelope, sink: String, rejection: Rejection, at time: Timestamp) throws {
        let place = OutboxPack.place(of: envelope.sequence)
        try writeDurably { db in
            // The same dead-letter row, and count of open letters, as a rejected input's.
            let origin = "outbox/\(envelope.sequence) \(envelope.kind.rawValue) for \(envelope.recipient)"
            let provenance = Provenance(adapter: sink, origin: origin, rawSize: envelope.payload.count, receivedAt: time)
            try SQLiteTransaction.insertDeadLetter(NewDeadLetter(rejection: rejection, provenance: provenance, raw: envelope.payload), in: db)
            try StoreCounter.add(1, to: StoreCounter.openDeadLetters, in: db)
            try db.execute(sql: "UPDATE outbox_packs SET delivered = ?, attempts = 0 WHERE seq = ? AND sink = ? AND delivered = ?",
                           arguments: [place.position + 1, place.pack, sink, place.position])
            let passed = db.changesCount
            try db.execute(sql: "DELETE FROM outbox_packs WHERE seq = ? AND delivered >= outputs", arguments: [place.pack])
            try StoreCounter.add(-passed, to: StoreCounter.outbox(sink), in: db)
        }
    }

    /// Removes up to `limit` selected dead letters, oldest first, and takes the open ones among them off
    /// the count of open letters, in one transaction.
    public func purgeDeadLetters(_ selection: DeadLetterSelection, limit: Int) throws -> Int {
        try writeDurably { db in
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
        try writeDurably { db in
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
    /// first pack in sequence order, one step into the rowid (a metrics scrape reads it).
    public func oldestOutputAge(now: Timestamp) throws -> Int64? {
        try pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT created_at FROM outbox_packs ORDER BY seq LIMIT 1").map { now.milliseconds - $0 }
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
