import GRDB
import HeraldPluginAPI

/// ``ChatTransaction`` over one GRDB connection inside a write transaction. A list of chats or users goes
/// to SQLite as one JSON array that `json_each` turns into rows (one statement whatever the batch's
/// size); keys of several values go as bound `VALUES` rows, ``maximumRows`` a statement. The joins are
/// `CROSS JOIN`s, which SQLite runs in the order written: over the keys, with an index lookup into the
/// table for each.
struct SQLiteTransaction: ChatTransaction {
    let db: Database
    /// The writer's statements, kept from one transaction to the next.
    let statements: WriterStatements
    /// Where the transaction's statements keep the text and bytes they bind.
    let arena = BindingArena()
    /// The batch's new messages inserted ahead of its delta (``storeMessagesAhead(_:)``), until ``write(_:)``.
    let ahead = MessagesStoredAhead()

    func loadSlice(_ keys: SliceKeys) throws -> StateSlice {
        var slice = StateSlice()
        let chats = Self.jsonArray(keys.chats.map(\.rawValue))
        let messages = Array(keys.messages)

        try queryInChunks(.storedMessages, of: 2, count: messages.count, {
            "SELECT m.chat, m.id, m.sent_at, m.sender FROM (VALUES \($0)) k CROSS JOIN messages m ON m.chat = k.column1 AND m.id = k.column2"
        }, bind: { index, binder in
            try binder.bind(messages[index].chat.rawValue)
            try binder.bind(messages[index].id.rawValue)
        }) { row in
            let ref = try MessageRef(chat: ChatID(row[0] as String), id: MessageID(row[1] as String))
            slice.messages[ref] = try StoredMessage(key: MessageKey(sentAt: Timestamp(milliseconds: row[2]), id: ref.id),
                                                sender: UserID(row[3] as String))
        }
        try each(.newestMessages, """
            SELECT m.chat, m.sent_at, m.id FROM json_each(?) j CROSS JOIN messages m
            ON m.rowid = (SELECT rowid FROM messages WHERE chat = j.value ORDER BY sent_at DESC, id DESC LIMIT 1)
            """, chats) { row in
            slice.newestMessage[try ChatID(row[0] as String)] = try MessageKey(sentAt: Timestamp(milliseconds: row[1]), id: MessageID(row[2] as String))
        }
        try each(.memberships, """
            SELECT c.chat, c.declared, m.user, m.declared, m.inferred FROM json_each(?) j CROSS JOIN chats c ON c.chat = j.value
            LEFT JOIN chat_members m ON m.chat = c.chat
            """, chats) { row in
            let chat = try ChatID(row[0] as String)
            var membership = try slice.memberships[chat] ?? ChatMembership(declared: row[1] as Bool, declaredMembers: [], inferredMembers: [])
            if let user: String = row.optional(2) {
                if try row[3] as Bool { membership.declaredMembers.insert(UserID(user)) }
                if try row[4] as Bool { membership.inferredMembers.insert(UserID(user)) }
            }
            slice.memberships[chat] = membership
        }
        try each(.readPositions, """
            SELECT r.chat, r.user, r.sent_at, r.message_id FROM json_each(?) j CROSS JOIN read_positions r ON r.chat = j.value
            """, chats) { row in
            slice.readPositions[try ChatID(row[0] as String), default: [:]][try UserID(row[1] as String)] =
                try MessageKey(sentAt: Timestamp(milliseconds: row[2]), id: MessageID(row[3] as String))
        }
        try each(.presence, "SELECT p.chat, p.user, p.until FROM json_each(?) j CROSS JOIN presence p ON p.chat = j.value", chats) { row in
            slice.presence[try ChatID(row[0] as String), default: [:]][try UserID(row[1] as String)] = try Timestamp(milliseconds: row[2])
        }
        // Reads rarely wait for their message: skip the lookup when none waits anywhere.
        var anyPending = false
        try statements.statement(.anyPendingReads, in: db) { "SELECT EXISTS (SELECT 1 FROM pending_reads)" }.forEachRow { row in
            anyPending = try row[0]
        }
        guard anyPending else { return slice }
        try queryInChunks(.pendingReads, of: 2, count: messages.count, {
            """
            SELECT p.chat, p.message_id, p.user, p.read_at FROM (VALUES \($0)) k
            CROSS JOIN pending_reads p ON p.chat = k.column1 AND p.message_id = k.column2
            """
        }, bind: { index, binder in
            try binder.bind(messages[index].chat.rawValue)
            try binder.bind(messages[index].id.rawValue)
        }) { row in
            let ref = try MessageRef(chat: ChatID(row[0] as String), id: MessageID(row[1] as String))
            slice.pendingReads[ref, default: [:]][try UserID(row[2] as String)] = try Timestamp(milliseconds: row[3])
        }
        return slice
    }

    func loadCounters(users: Set<UserID>, ranges: [StoredRange], into slice: inout StateSlice) throws {
        slice.unread = try loadUnread(users: users)
        slice.ranges = try summarise(ranges)
    }

    func loadUnread(users: Set<UserID>) throws -> [UserID: [ChatID: Int]] {
        var counters: [UserID: [ChatID: Int]] = [:]
        counters.reserveCapacity(users.count)
        for user in users { counters[user] = [:] }
        // The rows come user by user (the join walks the array, then the user's counters), so each user's
        // counters are gathered apart and stored with one lookup.
        var user: UserID?
        var chats: [ChatID: Int] = [:]
        func store() {
            if let user, !chats.isEmpty { counters[user] = chats }
        }
        try each(.unread, "SELECT u.user, u.chat, u.count FROM json_each(?) j CROSS JOIN unread u ON u.user = j.value",
                 Self.jsonArray(users.map(\.rawValue))) { row in
            let rowUser: String = try row[0]
            if rowUser != user?.rawValue {
                store()
                let next = UserID(rowUser)
                user = next
                chats = counters[next] ?? [:]
            }
            chats[try ChatID(row[1] as String)] = try row[2]
        }
        store()
        return counters
    }

    func summarise(_ ranges: [StoredRange]) throws -> [StoredRange: StoredRangeSummary] {
        // Rows name their range by its place in `ranges`; the summaries go into the dictionary once, at the end.
        var gathered = [StoredRangeSummary](repeating: StoredRangeSummary(), count: ranges.count)
        try queryInChunks(.rangeSummaries, of: 7, count: ranges.count, {
            """
            SELECT k.column1, m.sender, count(*) FROM (VALUES \($0)) k CROSS JOIN messages m
            ON m.chat = k.column2 AND (m.sent_at, m.id) > (k.column4, k.column5) AND (m.sent_at, m.id) <= (k.column6, k.column7)
               AND m.sender <> k.column3
            GROUP BY k.column1, m.sender
            """
        }, bind: { index, binder in
            let range = ranges[index]
            try binder.bind(index)
            try binder.bind(range.chat.rawValue)
            try binder.bind(range.user.rawValue)
            try binder.bind(range.lowerBound.sentAt)
            try binder.bind(range.lowerBound.id)
            try binder.bind(range.upperBound.sentAt)
            try binder.bind(range.upperBound.id)
        }) { row in
            let index: Int = try row[0]
            gathered[index].count += try row[2] as Int
            gathered[index].senders.insert(try UserID(row[1] as String))
        }
        var summaries: [StoredRange: StoredRangeSummary] = [:]
        summaries.reserveCapacity(ranges.count)
        for (range, summary) in zip(ranges, gathered) { summaries[range] = summary }
        return summaries
    }

    /// Runs `sql(values)` over `count` key rows of `columns` values, ``maximumRows`` rows a statement
    /// (`values` is the statement's `(?,…),(?,…)` list; `bind(index, &binder)` binds key row `index`), and
    /// hands each result row to `body`. The statements are kept for `site`.
    func queryInChunks(_ site: WriterStatements.Site, of columns: Int, count: Int, _ sql: (String) -> String,
                       bind: (Int, inout StatementBinder) throws -> Void, _ body: (StatementRow) throws -> Void) throws {
        var index = 0
        while index < count {
            let chunk = min(Self.maximumRows, count - index)
            let statement = try statements.statement(site, rows: chunk, in: db) { sql(Self.valuesList(rows: chunk, columns: columns)) }
            try statement.withBindings(in: arena, { binder in
                for offset in index..<(index + chunk) { try bind(offset, &binder) }
            }) {
                try statement.forEachRow(body)
            }
            index += chunk
        }
    }

    /// Strings as a JSON array, one statement parameter that `json_each` turns back into rows.
    static func jsonArray(_ strings: [String]) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        for (index, string) in strings.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            OutputWireFormat.appendJSONString(string, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Runs a query with one parameter, kept for `site`, and hands each row to `body`.
    func each(_ site: WriterStatements.Site, _ sql: String, _ parameter: String, _ body: (StatementRow) throws -> Void) throws {
        let statement = try statements.statement(site, in: db) { sql }
        try statement.withBindings(in: arena, { binder in try binder.bind(parameter) }) { try statement.forEachRow(body) }
    }

    /// A user's badge from the stored counters.
    static func badge(for user: UserID, in db: Database) throws -> BadgeUpdate {
        var chats: [ChatID: Int] = [:]
        var total = 0
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT chat, count FROM unread WHERE user = ?"), arguments: [user.rawValue])
        while let row = try rows.next() {
            let count: Int = row[1]
            chats[ChatID(rawValue: row[0])] = count
            total += count
        }
        return BadgeUpdate(recipient: user, unread: total, chats: chats)
    }
}

/// The messages a SQLite transaction inserted ahead of its delta, between
/// ``SQLiteTransaction/storeMessagesAhead(_:)`` and ``SQLiteTransaction/write(_:)``: a transaction is a
/// value, and this is the part of it that changes. Used on the transaction's thread only.
final class MessagesStoredAhead {
    /// The messages, once inserted.
    var messages: [NewMessage]?
}
