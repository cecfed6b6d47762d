import Foundation
import GRDB
import HeraldPluginAPI

extension SQLiteTransaction {
    /// Writes a batch's changes: a statement per kind of change (rows with large values, messages and
    /// outbox entries, in multi-row statements of ``BulkInsert/maximumRows``).
    func write(_ delta: StoreDelta) throws {
        let inserted = try insertMessages(delta.messages)
        guard inserted == delta.messages.count else {
            throw StoreConflict("\(delta.messages.count - inserted) of \(delta.messages.count) messages were stored meanwhile")
        }
        try writeMembership(delta)
        try writeReads(delta)
        try writeCounters(delta.unreadDeltas)
        try writePresence(delta.presence)
        try insertOutbox(delta.outbox)
        for letter in delta.deadLetters { try Self.insertDeadLetter(letter, in: db) }
        for checkpoint in delta.checkpoints { try saveCheckpoint(checkpoint, at: delta.checkpointTime) }
        try StoreCounter.add(inserted, to: StoreCounter.messages, in: db)
        try StoreCounter.add(delta.deadLetters.count, to: StoreCounter.openDeadLetters, in: db)
    }

    private func run(_ sql: String, _ rows: inout SQLJSONRows) throws {
        guard rows.count > 0 else { return }
        try db.cachedStatement(sql: sql).execute(arguments: [rows.text()])
    }

    private func writeMembership(_ delta: StoreDelta) throws {
        var chats = SQLJSONRows()
        for (chat, declared) in delta.chats.sorted(by: { $0.key < $1.key }) {
            chats.startRow()
            chats.add(chat.rawValue)
            chats.add(declared ? 1 : 0)
        }
        try run("""
            INSERT INTO chats(chat, declared) SELECT value ->> 0, value ->> 1 FROM json_each(?) WHERE true
            ON CONFLICT(chat) DO UPDATE SET declared = max(declared, excluded.declared)
            """, &chats)
        var members = SQLJSONRows()
        for flags in delta.members {
            members.startRow()
            members.add(flags.chat.rawValue)
            members.add(flags.user.rawValue)
            members.add(flags.declared ? 1 : 0)
            members.add(flags.inferred ? 1 : 0)
        }
        try run("""
            INSERT INTO chat_members(chat, user, declared, inferred) SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3
            FROM json_each(?) WHERE true
            ON CONFLICT(chat, user) DO UPDATE SET declared = max(declared, excluded.declared), inferred = max(inferred, excluded.inferred)
            """, &members)
    }

    private func writeReads(_ delta: StoreDelta) throws {
        var positions = SQLJSONRows()
        for position in delta.readPositions {
            positions.startRow()
            positions.add(position.user.rawValue)
            positions.add(position.chat.rawValue)
            positions.add(position.key, high: false)
        }
        // Positions only move forward, whoever wrote last.
        try run("""
            INSERT INTO read_positions(user, chat, sent_at, message_id) SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3
            FROM json_each(?) WHERE true
            ON CONFLICT(chat, user) DO UPDATE SET sent_at = excluded.sent_at, message_id = excluded.message_id
            WHERE (excluded.sent_at, excluded.message_id) > (read_positions.sent_at, read_positions.message_id)
            """, &positions)
        var added = SQLJSONRows()
        for pending in delta.pendingReadsAdded {
            added.startRow()
            added.add(pending.message.chat.rawValue)
            added.add(pending.message.id.rawValue)
            added.add(pending.user.rawValue)
            added.add(pending.readAt.milliseconds)
        }
        try run("""
            INSERT INTO pending_reads(chat, message_id, user, read_at) SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3
            FROM json_each(?) WHERE true ON CONFLICT DO UPDATE SET read_at = max(read_at, excluded.read_at)
            """, &added)
        var resolved = SQLJSONRows()
        for message in delta.pendingReadsResolved {
            resolved.startRow()
            resolved.add(message.chat.rawValue)
            resolved.add(message.id.rawValue)
        }
        try run("""
            DELETE FROM pending_reads WHERE (chat, message_id) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?))
            """, &resolved)
    }

    private func writeCounters(_ deltas: [UnreadDelta]) throws {
        var rows = SQLJSONRows()
        for change in deltas {
            rows.startRow()
            rows.add(change.user.rawValue)
            rows.add(change.chat.rawValue)
            rows.add(Int64(change.delta))
        }
        guard rows.count > 0 else { return }
        let parameter = rows.text()
        try db.cachedStatement(sql: """
            INSERT INTO unread(user, chat, count) SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(?) WHERE true
            ON CONFLICT(user, chat) DO UPDATE SET count = count + excluded.count
            """).execute(arguments: [parameter])
        try db.cachedStatement(sql: """
            DELETE FROM unread WHERE count <= 0 AND (user, chat) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?) WHERE value ->> 2 < 0)
            """).execute(arguments: [parameter])
    }

    private func writePresence(_ changes: [PresenceChange]) throws {
        var rows = SQLJSONRows()
        for change in changes {
            rows.startRow()
            rows.add(change.user.rawValue)
            rows.add(change.chat.rawValue)
            if let until = change.until { rows.add(until.milliseconds) } else { rows.addNull() }
        }
        guard rows.count > 0 else { return }
        let parameter = rows.text()
        try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO presence(user, chat, until) SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(?)
            WHERE value ->> 2 IS NOT NULL
            """).execute(arguments: [parameter])
        try db.cachedStatement(sql: """
            DELETE FROM presence WHERE (user, chat) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?) WHERE value ->> 2 IS NULL)
            """).execute(arguments: [parameter])
    }

    /// Inserts messages unless (chat, id) exists; returns how many were inserted.
    private func insertMessages(_ messages: [NewMessage]) throws -> Int {
        var inserted = 0
        try insertInChunks(.messages, count: messages.count) { index, binder in
            let message = messages[index].message
            try binder.bind(message.chat.rawValue)
            try binder.bind(message.id.rawValue)
            try binder.bind(message.sender.rawValue)
            try binder.bind(message.body)
            try binder.bind(message.sentAt.milliseconds)
            try binder.bind(messages[index].receivedAt.milliseconds)
        } inserted: { inserted += $0 }
        return inserted
    }

    private func insertOutbox(_ rows: [OutboxRow]) throws {
        try insertInChunks(.outbox, count: rows.count) { index, binder in
            let row = rows[index]
            try binder.bind(row.sink)
            try binder.bind(row.recipient.rawValue)
            try binder.bind(row.kind.rawValue)
            try binder.bind(Data(row.payload))
            try binder.bind(row.createdAt.milliseconds)
        } inserted: { _ in }
        // Rows per sink; sinks are few, so a scan beats hashing a name for every row.
        var perSink: [(sink: String, rows: Int)] = []
        for row in rows {
            if let index = perSink.firstIndex(where: { $0.sink == row.sink }) {
                perSink[index].rows += 1
            } else {
                perSink.append((row.sink, 1))
            }
        }
        for (sink, count) in perSink { try StoreCounter.add(count, to: StoreCounter.outbox(sink), in: db) }
    }

    /// Inserts `count` rows with multi-row statements of up to ``BulkInsert/maximumRows`` rows;
    /// `row(index, &binder)` binds one row's values; `inserted` hears each statement's changed rows.
    private func insertInChunks(_ insert: BulkInsert, count: Int, row: (Int, inout StatementBinder) throws -> Void,
                                inserted: (Int) -> Void) throws {
        var index = 0
        while index < count {
            let chunk = min(BulkInsert.maximumRows, count - index)
            try db.cachedStatement(sql: insert.sql(rows: chunk)).execute { binder in
                for offset in index..<(index + chunk) { try row(offset, &binder) }
            }
            inserted(db.changesCount)
            index += chunk
        }
    }

    private func saveCheckpoint(_ checkpoint: SourceCheckpoint, at time: Timestamp) throws {
        if let value = checkpoint.value {
            try db.execute(sql: "INSERT OR REPLACE INTO source_checkpoints(source, key, value, updated_at) VALUES (?,?,?,?)",
                           arguments: [checkpoint.source, checkpoint.key, value, time.milliseconds])
        } else {
            try db.execute(sql: "DELETE FROM source_checkpoints WHERE source = ? AND key = ?", arguments: [checkpoint.source, checkpoint.key])
        }
    }

    /// Stores a rejected input.
    static func insertDeadLetter(_ letter: NewDeadLetter, in db: Database) throws {
        try db.execute(sql: """
            INSERT INTO dead_letters(adapter, origin, reason, detail, raw, raw_size, received_at) VALUES (?,?,?,?,?,?,?)
            """, arguments: [letter.provenance.adapter, letter.provenance.origin, letter.rejection.reason.rawValue, letter.rejection.detail,
                             Data(letter.raw), letter.provenance.rawSize, letter.provenance.receivedAt.milliseconds])
    }
}
