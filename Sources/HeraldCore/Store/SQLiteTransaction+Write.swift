import Foundation
import GRDB
import HeraldPluginAPI

extension SQLiteTransaction {
    /// The writer inserts a batch's new messages while the router applies the batch on another thread.
    var messagesAhead: MessagesAhead { .written }

    /// Inserts the batch's new messages before the batch is applied (the router applies it on another
    /// thread meanwhile); ``write(_:)`` writes the rest.
    func storeMessagesAhead(_ messages: [NewMessage]) throws {
        try StoreConflict.check(inserted: insertMessages(Self.inIndexOrder(messages)), of: messages.count)
        ahead.messages = messages
    }

    /// Writes a batch's changes: a multi-row statement per kind of change and ``maximumRows`` rows, with
    /// the values bound (in process, statements are cheap; parsing values back out of JSON is not). The
    /// messages that went ahead (``storeMessagesAhead(_:)``) are not inserted again.
    func write(_ delta: StoreDelta) throws {
        var messages = delta.messages
        var inserted = 0
        if let stored = ahead.messages {
            ahead.messages = nil
            inserted = stored.count
            messages = NewMessage.remaining(messages, after: stored)
        }
        let insertedNow = try insertMessages(Self.inIndexOrder(messages))
        try StoreConflict.check(inserted: insertedNow, of: messages.count)
        inserted += insertedNow
        try writeMembership(delta)
        try writeReads(delta)
        try writeCounters(delta.unreadDeltas)
        try writePresence(delta.presence)
        try insertOutbox(delta.outbox)
        for letter in delta.deadLetters { try Self.insertDeadLetter(letter, in: db) }
        for checkpoint in delta.checkpoints { try saveCheckpoint(checkpoint, at: delta.checkpointTime) }
        try StoreCounter.add(inserted, to: StoreCounter.messages, in: db, statements: statements)
        try StoreCounter.add(delta.deadLetters.count, to: StoreCounter.openDeadLetters, in: db, statements: statements)
    }

    /// Rows per statement at most (SQLite allows 32,766 parameters; 64 rows keep statements small).
    static let maximumRows = 64

    /// The `(?,…),(?,…)` list of `rows` rows of `columns` parameters each. Up to ``maximumRows`` rows of
    /// up to eight parameters it is a prefix of a list built once: building the text anew for every
    /// statement cost about 3% of a commit's instructions.
    static func valuesList(rows: Int, columns: Int) -> String {
        guard rows <= maximumRows, columns < fullValuesLists.count else { return buildValuesList(rows: rows, columns: columns) }
        let rowLength = 2 * columns + 1  // "(?" then ",?" for each further column, then ")"
        let length = rows == 0 ? 0 : rows * (rowLength + 1) - 1
        return String(decoding: fullValuesLists[columns].utf8.prefix(length), as: UTF8.self)
    }

    /// ``maximumRows`` rows of 0 to 8 parameters.
    private static let fullValuesLists = (0...8).map { buildValuesList(rows: maximumRows, columns: $0) }

    private static func buildValuesList(rows: Int, columns: Int) -> String {
        let row = "(" + Array(repeating: "?", count: columns).joined(separator: ",") + ")"
        return Array(repeating: row, count: rows).joined(separator: ",")
    }

    /// Runs `sql(values)` over `count` rows of `columns` values, ``maximumRows`` rows a statement, where
    /// `values` is the statement's `(?,…),(?,…)` list and `bind(index, &binder)` binds row `index`.
    /// - Returns: the rows the statements changed.
    /// The statements are kept for `site`.
    @discardableResult
    func inChunks(_ site: WriterStatements.Site, of columns: Int, count: Int, _ sql: (String) -> String,
                  bind: (Int, inout StatementBinder) throws -> Void) throws -> Int {
        var changed = 0
        var index = 0
        while index < count {
            let chunk = min(Self.maximumRows, count - index)
            let statement = try statements.statement(site, rows: chunk, in: db) { sql(Self.valuesList(rows: chunk, columns: columns)) }
            try statement.execute(in: arena) { binder in
                for offset in index..<(index + chunk) { try bind(offset, &binder) }
            }
            changed += db.changesCount
            index += chunk
        }
        return changed
    }

    private func writeMembership(_ delta: StoreDelta) throws {
        let chats = delta.chats.sorted { $0.key < $1.key }
        try inChunks(.upsertChats, of: 2, count: chats.count, {
            "INSERT INTO chats(chat, declared) VALUES \($0) ON CONFLICT(chat) DO UPDATE SET declared = max(declared, excluded.declared)"
        }) { index, binder in
            try binder.bind(chats[index].key.rawValue)
            try binder.bind(chats[index].value)
        }
        let members = delta.members
        try inChunks(.upsertMembers, of: 4, count: members.count, {
            """
            INSERT INTO chat_members(chat, user, declared, inferred) VALUES \($0) ON CONFLICT(chat, user)
            DO UPDATE SET declared = max(declared, excluded.declared), inferred = max(inferred, excluded.inferred)
            """
        }) { index, binder in
            try binder.bind(members[index].chat.rawValue)
            try binder.bind(members[index].user.rawValue)
            try binder.bind(members[index].declared)
            try binder.bind(members[index].inferred)
        }
    }

    private func writeReads(_ delta: StoreDelta) throws {
        let positions = delta.readPositions
        // Positions only move forward, whoever wrote last.
        try inChunks(.moveReadPositions, of: 4, count: positions.count, {
            """
            INSERT INTO read_positions(user, chat, sent_at, message_id) VALUES \($0)
            ON CONFLICT(chat, user) DO UPDATE SET sent_at = excluded.sent_at, message_id = excluded.message_id
            WHERE (excluded.sent_at, excluded.message_id) > (read_positions.sent_at, read_positions.message_id)
            """
        }) { index, binder in
            try binder.bind(positions[index].user.rawValue)
            try binder.bind(positions[index].chat.rawValue)
            try binder.bind(positions[index].key.sentAt.milliseconds)
            try binder.bind(positions[index].key.id.rawValue)
        }
        let added = delta.pendingReadsAdded
        try inChunks(.addPendingReads, of: 4, count: added.count, {
            """
            INSERT INTO pending_reads(chat, message_id, user, read_at) VALUES \($0)
            ON CONFLICT DO UPDATE SET read_at = max(read_at, excluded.read_at)
            """
        }) { index, binder in
            try binder.bind(added[index].message.chat.rawValue)
            try binder.bind(added[index].message.id.rawValue)
            try binder.bind(added[index].user.rawValue)
            try binder.bind(added[index].readAt.milliseconds)
        }
        let resolved = delta.pendingReadsResolved
        try inChunks(.resolvePendingReads, of: 2, count: resolved.count, { KeyedDeletion.resolvedPendingReads.sql(values: $0) }) { index, binder in
            try binder.bind(resolved[index].chat.rawValue)
            try binder.bind(resolved[index].id.rawValue)
        }
    }

    private func writeCounters(_ deltas: [UnreadDelta]) throws {
        try inChunks(.addToCounters, of: 3, count: deltas.count, {
            "INSERT INTO unread(user, chat, count) VALUES \($0) ON CONFLICT(user, chat) DO UPDATE SET count = count + excluded.count"
        }) { index, binder in
            try binder.bind(deltas[index].user.rawValue)
            try binder.bind(deltas[index].chat.rawValue)
            try binder.bind(deltas[index].delta)
        }
        // A counter that reaches 0 goes; only a falling one can.
        let falling = deltas.filter { $0.delta < 0 }
        try inChunks(.deleteFallenCounters, of: 2, count: falling.count, { KeyedDeletion.fallenCounters.sql(values: $0) }) { index, binder in
            try binder.bind(falling[index].user.rawValue)
            try binder.bind(falling[index].chat.rawValue)
        }
    }

    private func writePresence(_ changes: [PresenceChange]) throws {
        let set = changes.filter { $0.until != nil }
        try inChunks(.setPresence, of: 3, count: set.count, { "INSERT OR REPLACE INTO presence(user, chat, until) VALUES \($0)" }) { index, binder in
            try binder.bind(set[index].user.rawValue)
            try binder.bind(set[index].chat.rawValue)
            try binder.bind(set[index].until?.milliseconds ?? 0)
        }
        let cleared = changes.filter { $0.until == nil }
        try inChunks(.endPresence, of: 2, count: cleared.count, { KeyedDeletion.endedPresence.sql(values: $0) }) { index, binder in
            try binder.bind(cleared[index].user.rawValue)
            try binder.bind(cleared[index].chat.rawValue)
        }
    }

    /// A commit's messages in the order of the messages' indexes, (chat, sent_at, id): every insert
    /// changes a leaf of each index, and in arrival order a commit over many chats changed each leaf
    /// several times, far apart. Once the writer's page cache was full, a changed leaf was written to
    /// the WAL before the transaction ended, read back and written again. In index order each leaf is
    /// changed by one run of inserts. The table stays in arrival order by commit: its rows of one commit
    /// go in by chat, as the migration that made the table ordered them.
    static func inIndexOrder(_ messages: [NewMessage]) -> [NewMessage] {
        messages.sorted { lhs, rhs in
            KeyOrder.ascending(lhs.message.chat.byteOrder(comparedTo: rhs.message.chat), KeyOrder.order(lhs.message.sentAt, rhs.message.sentAt),
                               lhs.message.id.byteOrder(comparedTo: rhs.message.id))
        }
    }

    /// Inserts messages unless (chat, id) exists; returns how many were inserted.
    private func insertMessages(_ messages: [NewMessage]) throws -> Int {
        try inChunks(.insertMessages, of: 6, count: messages.count, {
            "INSERT OR IGNORE INTO messages(chat, id, sender, body, sent_at, received_at) VALUES \($0)"
        }) { index, binder in
            let message = messages[index].message
            try binder.bind(message.chat.rawValue)
            try binder.bind(message.id.rawValue)
            try binder.bind(message.sender.rawValue)
            try binder.bind(message.body)
            try binder.bind(message.sentAt.milliseconds)
            try binder.bind(messages[index].receivedAt.milliseconds)
        }
    }

    /// Queues the batch's outputs, a row of `outbox_packs` per sink and up to ``OutboxPack/maximumOutputs``
    /// of them.
    private func insertOutbox(_ rows: [OutboxRow]) throws {
        guard !rows.isEmpty else { return }
        let statement = try statements.statement(.insertOutboxPack, in: db) {
            "INSERT INTO outbox_packs(sink, created_at, outputs, entries) VALUES (?,?,?,?)"
        }
        for pack in OutboxPack.packing(rows) {
            try statement.execute(in: arena) { binder in
                try binder.bind(pack.sink)
                try binder.bind(pack.createdAt)
                try binder.bind(Int64(pack.rows.count))
                try binder.bind(entriesOf: pack, rows: rows)
            }
            try StoreCounter.add(pack.rows.count, to: StoreCounter.outbox(pack.sink), in: db, statements: statements)
        }
    }

    /// A source's checkpoint, saved with the batch (a polling or streaming source saves one every commit).
    private func saveCheckpoint(_ checkpoint: SourceCheckpoint, at time: Timestamp) throws {
        if let value = checkpoint.value {
            try statements.statement(.saveCheckpoint, in: db) { "INSERT OR REPLACE INTO source_checkpoints(source, key, value, updated_at) VALUES (?,?,?,?)" }
                .execute(arguments: [checkpoint.source, checkpoint.key, value, time.milliseconds])
        } else {
            try statements.statement(.deleteCheckpoint, in: db) { "DELETE FROM source_checkpoints WHERE source = ? AND key = ?" }
                .execute(arguments: [checkpoint.source, checkpoint.key])
        }
    }

    /// Stores a rejected input (with a kept statement: a flood of bad input dead-letters many a commit).
    static func insertDeadLetter(_ letter: NewDeadLetter, in db: Database) throws {
        try db.cachedStatement(sql: """
            INSERT INTO dead_letters(adapter, origin, reason, detail, raw, raw_size, received_at) VALUES (?,?,?,?,?,?,?)
            """).execute(arguments: [letter.provenance.adapter, letter.provenance.origin, letter.rejection.reason.rawValue,
                                     letter.rejection.detail, Data(letter.raw), letter.provenance.rawSize,
                                     letter.provenance.receivedAt.milliseconds])
    }
}
