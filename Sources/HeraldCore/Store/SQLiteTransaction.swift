import Foundation
import GRDB
import HeraldPluginAPI

/// The chat-model primitives of ``ChatTransaction`` over one GRDB connection inside a transaction.
/// Statements are cached per connection, so the hot path prepares nothing.
struct SQLiteTransaction: ChatTransaction {
    let db: Database
    let cache: SQLiteTransactionCache

    init(db: Database, cache: SQLiteTransactionCache = SQLiteTransactionCache()) {
        self.db = db
        self.cache = cache
    }

    /// Writes what the transaction buffered (unread increments, the last outbox rows) — once, just before commit.
    func flush() throws {
        try flushUnreadIncrements()
        try flushOutbox()
        for (sink, count) in cache.outboxRowsPerSink { try StoreCounter.add(count, to: StoreCounter.outbox(sink), in: db) }
        try StoreCounter.add(cache.messagesStored, to: StoreCounter.messages, in: db)
        try StoreCounter.add(cache.deadLettersOpened, to: StoreCounter.openDeadLetters, in: db)
        cache.outboxRowsPerSink = []
        cache.messagesStored = 0
        cache.deadLettersOpened = 0
    }

    /// Inserts the buffered outbox rows. Called whenever a full statement's worth is waiting, so a large
    /// batch does not hold every output's payload until its commit.
    private func flushOutbox() throws {
        let rows = cache.outbox
        cache.outbox.removeAll(keepingCapacity: true)
        try insertInChunks(.outbox, count: rows.count) { index, binder in
            let row = rows[index]
            try binder.bind(row.sink)
            try binder.bind(row.recipient)
            try binder.bind(row.kind)
            try binder.bind(row.payload)
            try binder.bind(row.createdAt)
        }
        // Rows per sink; sinks are few, so a scan beats hashing a name for every row.
        for row in rows {
            if let index = cache.outboxRowsPerSink.firstIndex(where: { $0.sink == row.sink }) {
                cache.outboxRowsPerSink[index].rows += 1
            } else {
                cache.outboxRowsPerSink.append((row.sink, 1))
            }
        }
    }

    /// Inserts `count` rows with multi-row statements of up to ``BulkInsert/maximumRows`` rows;
    /// `row(index, &binder)` binds one row's values.
    private func insertInChunks(_ insert: BulkInsert, count: Int, row: (Int, inout StatementBinder) throws -> Void) throws {
        var index = 0
        while index < count {
            let chunk = min(BulkInsert.maximumRows, count - index)
            let statement = try cache.bulkStatement(insert, rows: chunk, in: db)
            try statement.execute { binder in
                for offset in index..<(index + chunk) { try row(offset, &binder) }
            }
            index += chunk
        }
    }

    private func run(_ sql: String, _ values: any StatementBinding...) throws {
        try db.cachedStatement(sql: sql).execute(binding: values)
    }

    func insertMessage(_ message: MessageReceived, receivedAt: Timestamp) throws -> Bool {
        // Once per message: the statement is kept for the transaction, and the values bound directly.
        let statement = try cache.insertMessageStatement ?? db.cachedStatement(sql: """
            INSERT OR IGNORE INTO messages(chat, id, sender, body, sent_at, received_at) VALUES (?,?,?,?,?,?)
            """)
        cache.insertMessageStatement = statement
        try statement.execute { binder in
            try binder.bind(message.chat.rawValue)
            try binder.bind(message.id.rawValue)
            try binder.bind(message.sender.rawValue)
            try binder.bind(message.body)
            try binder.bind(message.sentAt.milliseconds)
            try binder.bind(receivedAt.milliseconds)
        }
        guard db.changesCount > 0 else { return false }
        cache.messagesStored += 1
        return true
    }

    func messageKey(chat: ChatID, id: MessageID) throws -> MessageKey? {
        let sentAt = try Int64.fetchOne(db.cachedStatement(sql: "SELECT sent_at FROM messages WHERE chat = ? AND id = ?"),
                                        arguments: [chat.rawValue, id.rawValue])
        return sentAt.map { MessageKey(sentAt: Timestamp(milliseconds: $0), id: id) }
    }

    func members(of chat: ChatID) throws -> Set<UserID> { try membership(of: chat).effective }

    func membership(of chat: ChatID) throws -> ChatMembership {
        if let cached = cache.memberships[chat] { return cached }
        let loaded = try loadMembership(of: chat)
        cache.memberships[chat] = loaded
        return loaded
    }

    private func loadMembership(of chat: ChatID) throws -> ChatMembership {
        var result = ChatMembership(declared: nil, declaredMembers: [], inferredMembers: [])
        let rows = try Row.fetchCursor(db.cachedStatement(sql: """
            SELECT c.declared, m.user, m.declared, m.inferred FROM chats c LEFT JOIN chat_members m ON m.chat = c.chat WHERE c.chat = ?
            """), arguments: [chat.rawValue])
        while let row = try rows.next() {
            result.declared = row[0] as Bool
            guard let user = row[1] as String? else { continue }
            if row[2] as Bool { result.declaredMembers.insert(UserID(user)) }
            if row[3] as Bool { result.inferredMembers.insert(UserID(user)) }
        }
        return result
    }

    func addMembers(_ users: [UserID], to chat: ChatID, declared: Bool) throws {
        try run("INSERT INTO chats(chat, declared) VALUES (?, ?) ON CONFLICT(chat) DO UPDATE SET declared = max(declared, excluded.declared)",
                chat.rawValue, declared)
        let sql = declared
            ? "INSERT INTO chat_members(chat, user, declared) VALUES (?, ?, 1) ON CONFLICT DO UPDATE SET declared = 1"
            : "INSERT INTO chat_members(chat, user, inferred) VALUES (?, ?, 1) ON CONFLICT DO UPDATE SET inferred = 1"
        for user in users { try run(sql, chat.rawValue, user.rawValue) }
        if var membership = cache.memberships[chat] {
            if declared {
                membership.declared = true
                membership.declaredMembers.formUnion(users)
            } else {
                membership.declared = membership.declared ?? false
                membership.inferredMembers.formUnion(users)
            }
            cache.memberships[chat] = membership
        }
    }

    func readPosition(user: UserID, chat: ChatID) throws -> MessageKey? {
        let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT sent_at, message_id FROM read_positions WHERE user = ? AND chat = ?"),
                                   arguments: [user.rawValue, chat.rawValue])
        return row.map { MessageKey(sentAt: Timestamp(milliseconds: $0["sent_at"]), id: MessageID($0["message_id"] as String)) }
    }

    func readPositions(chat: ChatID) throws -> [UserID: MessageKey] {
        if let cached = cache.readPositions[chat] { return cached }
        var positions: [UserID: MessageKey] = [:]
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT user, sent_at, message_id FROM read_positions WHERE chat = ?"),
                                       arguments: [chat.rawValue])
        while let row = try rows.next() {
            positions[UserID(row[0] as String)] = MessageKey(sentAt: Timestamp(milliseconds: row[1]), id: MessageID(row[2] as String))
        }
        cache.readPositions[chat] = positions
        return positions
    }

    func setReadPosition(user: UserID, chat: ChatID, to key: MessageKey) throws {
        cache.readPositions[chat]?[user] = key
        try run("INSERT OR REPLACE INTO read_positions(user, chat, sent_at, message_id) VALUES (?,?,?,?)",
                user.rawValue, chat.rawValue, key.sentAt.milliseconds, key.id.rawValue)
    }

    func addPendingRead(user: UserID, chat: ChatID, upTo: MessageID, readAt: Timestamp) throws {
        _ = try chatsWithPendingReads()
        cache.chatsWithPendingReads?.insert(chat)
        try run("INSERT INTO pending_reads(chat, message_id, user, read_at) VALUES (?,?,?,?) ON CONFLICT DO UPDATE SET read_at = max(read_at, excluded.read_at)",
                chat.rawValue, upTo.rawValue, user.rawValue, readAt.milliseconds)
    }

    func takePendingReads(chat: ChatID, upTo: MessageID) throws -> [(user: UserID, readAt: Timestamp)] {
        // Reads rarely arrive before their message: most chats have none waiting, and knowing which
        // do saves a query per message.
        guard try chatsWithPendingReads().contains(chat) else { return [] }
        let rows = try Row.fetchAll(db.cachedStatement(sql: "SELECT user, read_at FROM pending_reads WHERE chat = ? AND message_id = ?"),
                                    arguments: [chat.rawValue, upTo.rawValue])
        guard !rows.isEmpty else { return [] }
        try run("DELETE FROM pending_reads WHERE chat = ? AND message_id = ?", chat.rawValue, upTo.rawValue)
        return rows.map { (UserID($0["user"] as String), Timestamp(milliseconds: $0["read_at"])) }
    }

    /// Chats with at least one pending read (read once, then kept current by this writer).
    private func chatsWithPendingReads() throws -> Set<ChatID> {
        if let known = cache.chatsWithPendingReads { return known }
        let chats = Set(try String.fetchAll(db.cachedStatement(sql: "SELECT DISTINCT chat FROM pending_reads")).map { ChatID($0) })
        cache.chatsWithPendingReads = chats
        return chats
    }

    func unread(user: UserID, chat: ChatID) throws -> Int {
        let stored = try Int.fetchOne(db.cachedStatement(sql: "SELECT count FROM unread WHERE user = ? AND chat = ?"),
                                      arguments: [user.rawValue, chat.rawValue]) ?? 0
        return stored + (cache.unreadIncrements[user]?[chat] ?? 0)
    }

    func incrementUnread(user: UserID, chat: ChatID) throws {
        cache.addUnread(user: user, chat: chat)
        cache.unreadIncrements[user, default: [:]][chat, default: 0] += 1
    }

    private func flushUnreadIncrements() throws {
        var rows: [(user: String, chat: String, count: Int)] = []
        for (user, chats) in cache.unreadIncrements {
            for (chat, count) in chats { rows.append((user.rawValue, chat.rawValue, count)) }
        }
        cache.unreadIncrements = [:]
        try insertInChunks(.unreadIncrements, count: rows.count) { index, binder in
            try binder.bind(rows[index].user)
            try binder.bind(rows[index].chat)
            try binder.bind(rows[index].count)
        }
    }

    func setUnread(user: UserID, chat: ChatID, count: Int) throws {
        cache.setUnread(user: user, chat: chat, to: count)
        cache.unreadIncrements[user]?[chat] = nil
        if count == 0 {
            try run("DELETE FROM unread WHERE user = ? AND chat = ?", user.rawValue, chat.rawValue)
        } else {
            try run("INSERT OR REPLACE INTO unread(user, chat, count) VALUES (?,?,?)", user.rawValue, chat.rawValue, count)
        }
    }

    func countUnread(user: UserID, chat: ChatID, after position: MessageKey?) throws -> Int {
        guard let position else {
            return try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM messages WHERE chat = ? AND sender <> ?"),
                                    arguments: [chat.rawValue, user.rawValue]) ?? 0
        }
        return try Int.fetchOne(db.cachedStatement(sql: """
            SELECT count(*) FROM messages WHERE chat = ? AND sender <> ? AND (sent_at, id) > (?, ?)
            """), arguments: [chat.rawValue, user.rawValue, position.sentAt.milliseconds, position.id.rawValue]) ?? 0
    }

    func senders(chat: ChatID, after: MessageKey?, through: MessageKey, excluding reader: UserID) throws -> Set<UserID> {
        let lower = after ?? MessageKey(sentAt: Timestamp(milliseconds: Int64.min), id: "")
        let senders = try String.fetchAll(db.cachedStatement(sql: """
            SELECT DISTINCT sender FROM messages
            WHERE chat = ? AND sender <> ? AND (sent_at, id) > (?, ?) AND (sent_at, id) <= (?, ?)
            """), arguments: [chat.rawValue, reader.rawValue, lower.sentAt.milliseconds, lower.id.rawValue,
                              through.sentAt.milliseconds, through.id.rawValue])
        return Set(senders.map { UserID($0) })
    }

    func badge(for user: UserID) throws -> BadgeUpdate {
        if let cached = cache.badges[user] { return cached }
        var chats: [String: Int] = [:]
        var total = 0
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT chat, count FROM unread WHERE user = ?"), arguments: [user.rawValue])
        while let row = try rows.next() {
            let count: Int = row[1]
            chats[row[0]] = count
            total += count
        }
        for (chat, increment) in cache.unreadIncrements[user] ?? [:] {
            chats[chat.rawValue, default: 0] += increment
            total += increment
        }
        let badge = BadgeUpdate(recipient: user, unread: total, chats: chats)
        cache.badges[user] = badge
        return badge
    }

    func presence(chat: ChatID) throws -> [UserID: Timestamp] {
        if let cached = cache.presence[chat] { return cached }
        var presence: [UserID: Timestamp] = [:]
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT user, until FROM presence WHERE chat = ?"), arguments: [chat.rawValue])
        while let row = try rows.next() { presence[UserID(row[0] as String)] = Timestamp(milliseconds: row[1]) }
        cache.presence[chat] = presence
        return presence
    }

    func setPresence(user: UserID, chat: ChatID, until: Timestamp?) throws {
        cache.presence[chat]?[user] = until
        if let until {
            try run("INSERT OR REPLACE INTO presence(user, chat, until) VALUES (?,?,?)", user.rawValue, chat.rawValue, until.milliseconds)
        } else {
            try run("DELETE FROM presence WHERE user = ? AND chat = ?", user.rawValue, chat.rawValue)
        }
    }

    func enqueue(_ output: Output, sinks: [String], at time: Timestamp) throws {
        guard !sinks.isEmpty else { return }
        let payload = Data(OutputWireFormat.encode(output))
        for sink in sinks {
            cache.outbox.append(.init(sink: sink, recipient: output.recipient.rawValue, kind: output.kind.rawValue, payload: payload,
                                      createdAt: time.milliseconds))
        }
        if cache.outbox.count >= BulkInsert.maximumRows { try flushOutbox() }
    }

    func deadLetter(_ rejection: Rejection, provenance: Provenance, raw: [UInt8]) throws {
        try run("""
            INSERT INTO dead_letters(adapter, origin, reason, detail, raw, raw_size, received_at) VALUES (?,?,?,?,?,?,?)
            """, provenance.adapter, provenance.origin, rejection.reason.rawValue, rejection.detail, Data(raw),
                  provenance.rawSize, provenance.receivedAt.milliseconds)
        cache.deadLettersOpened += 1
    }

    func saveCheckpoint(_ checkpoint: SourceCheckpoint, at time: Timestamp) throws {
        if let value = checkpoint.value {
            try run("INSERT OR REPLACE INTO source_checkpoints(source, key, value, updated_at) VALUES (?,?,?,?)",
                    checkpoint.source, checkpoint.key, value, time.milliseconds)
        } else {
            try run("DELETE FROM source_checkpoints WHERE source = ? AND key = ?", checkpoint.source, checkpoint.key)
        }
    }

    func markReplayed(deadLetter id: Int64, at time: Timestamp) throws {
        try run("UPDATE dead_letters SET replayed_at = ? WHERE id = ? AND replayed_at IS NULL", time.milliseconds, id)
        if db.changesCount > 0 {
            cache.deadLettersOpened -= 1
        } else {
            try run("UPDATE dead_letters SET replayed_at = ? WHERE id = ?", time.milliseconds, id)  // replayed again
        }
    }
}
