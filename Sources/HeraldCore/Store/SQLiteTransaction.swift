import GRDB
import HeraldPluginAPI

/// ``ChatTransaction`` over one GRDB connection inside a write transaction. Every set of keys goes to
/// SQLite as one JSON parameter that `json_each` turns into rows, so each load is one statement
/// whatever the batch's size. The joins are `CROSS JOIN`s, which SQLite runs in the order written:
/// over the keys, with an index lookup into the table for each.
struct SQLiteTransaction: ChatTransaction {
    let db: Database

    func loadSlice(_ keys: SliceKeys) throws -> StateSlice {
        var slice = StateSlice()
        var chatRows = SQLJSONRows()
        for chat in keys.chats {
            chatRows.startRow()
            chatRows.add(chat.rawValue)
        }
        let chats = chatRows.text()
        var messageRows = SQLJSONRows()
        for message in keys.messages {
            messageRows.startRow()
            messageRows.add(message.chat.rawValue)
            messageRows.add(message.id.rawValue)
        }
        let messages = messageRows.text()

        try each("""
            SELECT m.chat, m.id, m.sent_at, m.sender FROM json_each(?) j CROSS JOIN messages m
            ON m.chat = j.value ->> 0 AND m.id = j.value ->> 1
            """, messages) { row in
            let ref = MessageRef(chat: ChatID(row[0] as String), id: MessageID(row[1] as String))
            slice.messages[ref] = StoredMessage(key: MessageKey(sentAt: Timestamp(milliseconds: row[2]), id: ref.id),
                                                sender: UserID(row[3] as String))
        }
        try each("""
            SELECT m.chat, m.sent_at, m.id FROM json_each(?) j CROSS JOIN messages m
            ON m.rowid = (SELECT rowid FROM messages WHERE chat = j.value ->> 0 ORDER BY sent_at DESC, id DESC LIMIT 1)
            """, chats) { row in
            slice.newestMessage[ChatID(row[0] as String)] = MessageKey(sentAt: Timestamp(milliseconds: row[1]), id: MessageID(row[2] as String))
        }
        try each("""
            SELECT c.chat, c.declared, m.user, m.declared, m.inferred FROM json_each(?) j CROSS JOIN chats c ON c.chat = j.value ->> 0
            LEFT JOIN chat_members m ON m.chat = c.chat
            """, chats) { row in
            let chat = ChatID(row[0] as String)
            var membership = slice.memberships[chat] ?? ChatMembership(declared: row[1] as Bool, declaredMembers: [], inferredMembers: [])
            if let user = row[2] as String? {
                if row[3] as Bool { membership.declaredMembers.insert(UserID(user)) }
                if row[4] as Bool { membership.inferredMembers.insert(UserID(user)) }
            }
            slice.memberships[chat] = membership
        }
        try each("""
            SELECT r.chat, r.user, r.sent_at, r.message_id FROM json_each(?) j CROSS JOIN read_positions r ON r.chat = j.value ->> 0
            """, chats) { row in
            slice.readPositions[ChatID(row[0] as String), default: [:]][UserID(row[1] as String)] =
                MessageKey(sentAt: Timestamp(milliseconds: row[2]), id: MessageID(row[3] as String))
        }
        try each("""
            SELECT p.chat, p.user, p.until FROM json_each(?) j CROSS JOIN presence p ON p.chat = j.value ->> 0
            """, chats) { row in
            slice.presence[ChatID(row[0] as String), default: [:]][UserID(row[1] as String)] = Timestamp(milliseconds: row[2])
        }
        try each("""
            SELECT p.chat, p.message_id, p.user, p.read_at FROM json_each(?) j CROSS JOIN pending_reads p
            ON p.chat = j.value ->> 0 AND p.message_id = j.value ->> 1
            """, messages) { row in
            let ref = MessageRef(chat: ChatID(row[0] as String), id: MessageID(row[1] as String))
            slice.pendingReads[ref, default: [:]][UserID(row[2] as String)] = Timestamp(milliseconds: row[3])
        }
        return slice
    }

    func loadUnread(users: Set<UserID>) throws -> [UserID: [ChatID: Int]] {
        var counters: [UserID: [ChatID: Int]] = [:]
        var rows = SQLJSONRows()
        for user in users {
            counters[user] = [:]
            rows.startRow()
            rows.add(user.rawValue)
        }
        try each("SELECT u.user, u.chat, u.count FROM json_each(?) j CROSS JOIN unread u ON u.user = j.value ->> 0", rows.text()) { row in
            counters[UserID(row[0] as String), default: [:]][ChatID(row[1] as String)] = row[2]
        }
        return counters
    }

    func summarise(_ ranges: [StoredRange]) throws -> [StoredRange: StoredRangeSummary] {
        var summaries: [StoredRange: StoredRangeSummary] = [:]
        guard !ranges.isEmpty else { return summaries }
        var rows = SQLJSONRows()
        for range in ranges {
            summaries[range] = StoredRangeSummary()
            rows.startRow()
            rows.add(range.chat.rawValue)
            rows.add(range.user.rawValue)
            rows.add(range.after, high: false)
            rows.add(range.through, high: true)
        }
        try each("""
            SELECT j.key, m.sender, count(*) FROM json_each(?) j CROSS JOIN messages m
            ON m.chat = j.value ->> 0 AND (m.sent_at, m.id) > (j.value ->> 2, j.value ->> 3)
               AND (m.sent_at, m.id) <= (j.value ->> 4, j.value ->> 5) AND m.sender <> j.value ->> 1
            GROUP BY j.key, m.sender
            """, rows.text()) { row in
            let range = ranges[row[0] as Int]
            summaries[range]?.count += row[2] as Int
            summaries[range]?.senders.insert(UserID(row[1] as String))
        }
        return summaries
    }

    /// Runs a query with one parameter and hands each row to `body`.
    func each(_ sql: String, _ parameter: String, _ body: (Row) throws -> Void) throws {
        let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: [parameter])
        while let row = try rows.next() { try body(row) }
    }

    /// A user's badge from the stored counters.
    static func badge(for user: UserID, in db: Database) throws -> BadgeUpdate {
        var chats: [String: Int] = [:]
        var total = 0
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT chat, count FROM unread WHERE user = ?"), arguments: [user.rawValue])
        while let row = try rows.next() {
            let count: Int = row[1]
            chats[row[0]] = count
            total += count
        }
        return BadgeUpdate(recipient: user, unread: total, chats: chats)
    }
}
