import HeraldCore
import HeraldPluginAPI
import PostgresNIO

/// ``ChatTransaction`` over one PostgreSQL connection inside `BEGIN … COMMIT`. Every set of keys goes
/// to the server as arrays (`= ANY($1)`, `unnest(…)`), so each load and each kind of write is one
/// statement whatever the batch's size.
struct PostgresTransaction: ChatTransaction {
    let session: PostgresSession

    /// The slice in one statement: each part of it is a branch of a `UNION ALL`, told apart by `kind`.
    /// Before it, one statement takes the transaction's chat locks (``lockChats(_:)``).
    func loadSlice(_ keys: SliceKeys) throws -> StateSlice {
        var slice = StateSlice()
        let chats = keys.chats.map(\.rawValue)
        try lockChats(chats)
        let messageChats = keys.messages.map(\.chat.rawValue)
        let messageIDs = keys.messages.map(\.id.rawValue)
        let rows = try session.query("""
            WITH named AS (SELECT * FROM unnest(\(messageChats)::text[], \(messageIDs)::text[]) AS k(chat, id)),
                 touched AS (SELECT * FROM unnest(\(chats)::text[]) AS k(chat))
            SELECT 0, m.chat, m.id::text, m.sender, m.sent_at, NULL::bool, NULL::bool, NULL::bool
                FROM named k JOIN messages m ON m.chat = k.chat AND m.id = k.id
            UNION ALL SELECT 1, k.chat, n.id::text, NULL, n.sent_at, NULL, NULL, NULL
                FROM touched k CROSS JOIN LATERAL (SELECT sent_at, id FROM messages WHERE chat = k.chat ORDER BY sent_at DESC, id DESC LIMIT 1) n
            UNION ALL SELECT 2, c.chat, NULL, m.user_id, NULL, c.declared, m.declared, m.inferred
                FROM chats c LEFT JOIN chat_members m ON m.chat = c.chat WHERE c.chat IN (SELECT chat FROM touched)
            UNION ALL SELECT 3, chat, message_id::text, user_id, sent_at, NULL, NULL, NULL
                FROM read_positions WHERE chat IN (SELECT chat FROM touched)
            UNION ALL SELECT 4, chat, NULL, user_id, until, NULL, NULL, NULL
                FROM presence WHERE chat IN (SELECT chat FROM touched)
            UNION ALL SELECT 5, p.chat, p.message_id::text, p.user_id, p.read_at, NULL, NULL, NULL
                FROM named k JOIN pending_reads p ON p.chat = k.chat AND p.message_id = k.id
            """)
        for row in rows {
            let (kind, chatName, id, user, time, declared, declaredMember, inferredMember) =
                try row.decode((Int, String, String?, String?, Int64?, Bool?, Bool?, Bool?).self)
            let chat = ChatID(chatName)
            switch kind {
            case 0:
                guard let id, let user, let time else { continue }
                slice.messages[MessageRef(chat: chat, id: MessageID(id))] =
                    StoredMessage(key: MessageKey(sentAt: Timestamp(milliseconds: time), id: MessageID(id)), sender: UserID(user))
            case 1:
                guard let id, let time else { continue }
                slice.newestMessage[chat] = MessageKey(sentAt: Timestamp(milliseconds: time), id: MessageID(id))
            case 2:
                var membership = slice.memberships[chat] ?? ChatMembership(declared: declared == true, declaredMembers: [], inferredMembers: [])
                if let user {
                    if declaredMember == true { membership.declaredMembers.insert(UserID(user)) }
                    if inferredMember == true { membership.inferredMembers.insert(UserID(user)) }
                }
                slice.memberships[chat] = membership
            case 3:
                guard let id, let user, let time else { continue }
                slice.readPositions[chat, default: [:]][UserID(user)] = MessageKey(sentAt: Timestamp(milliseconds: time), id: MessageID(id))
            case 4:
                guard let user, let time else { continue }
                slice.presence[chat, default: [:]][UserID(user)] = Timestamp(milliseconds: time)
            default:
                guard let id, let user, let time else { continue }
                slice.pendingReads[MessageRef(chat: chat, id: MessageID(id)), default: [:]][UserID(user)] = Timestamp(milliseconds: time)
            }
        }
        return slice
    }

    /// Locks the chats' buckets until the transaction ends, in ascending order (so two batches never
    /// wait for each other in a cycle). Another instance's batch on the same chats waits here until
    /// this one commits, and then loads a slice that includes it: read-modify-write on a chat's
    /// counters, positions and presence is serialised across instances, while batches on other chats
    /// run side by side. The slice is read by the next statement, whose snapshot starts after the locks.
    func lockChats(_ chats: [String]) throws {
        guard !chats.isEmpty else { return }
        try session.query("""
            SELECT pg_advisory_xact_lock(\(PostgresSchema.chatLockClass), bucket) FROM (
                SELECT DISTINCT abs(hashtext(chat) % \(PostgresSchema.chatLockBuckets)) AS bucket
                FROM unnest(\(chats)::text[]) AS chat ORDER BY 1) AS buckets
            """)
    }

    /// Both counter loads in one statement, a `UNION ALL` told apart by `kind`: the users' unread
    /// counters (kind 0), and per range (its ordinal) and sender the stored messages in it (kind 1).
    func loadCounters(users: Set<UserID>, ranges: [StoredRange], into slice: inout StateSlice) throws {
        slice.unread = Dictionary(uniqueKeysWithValues: users.map { ($0, [:]) })
        var summaries: [StoredRange: StoredRangeSummary] = [:]
        for range in ranges { summaries[range] = StoredRangeSummary() }
        defer { slice.ranges = summaries }
        guard !users.isEmpty || !ranges.isEmpty else { return }
        let low = ranges.map(\.lowerBound)
        let high = ranges.map(\.upperBound)
        for row in try session.query("""
            SELECT 0, 0::int8, user_id, chat, unread::int8 FROM unread_counters WHERE user_id = ANY(\(users.map(\.rawValue))) AND unread <> 0
            UNION ALL SELECT 1, k.i, m.sender, NULL, count(*) FROM unnest(\(ranges.map(\.chat.rawValue))::text[],
                \(ranges.map(\.user.rawValue))::text[], \(low.map(\.sentAt))::int8[], \(low.map(\.id))::text[],
                \(high.map(\.sentAt))::int8[], \(high.map(\.id))::text[])
                WITH ORDINALITY AS k(chat, user_id, low_at, low_id, high_at, high_id, i)
            JOIN messages m ON m.chat = k.chat AND (m.sent_at, m.id) > (k.low_at, k.low_id COLLATE "C")
                AND (m.sent_at, m.id) <= (k.high_at, k.high_id COLLATE "C") AND m.sender <> k.user_id
            GROUP BY k.i, m.sender
            """) {
            let (kind, ordinal, user, chat, count) = try row.decode((Int, Int, String, String?, Int).self)
            if kind == 0, let chat {
                slice.unread[UserID(user), default: [:]][ChatID(chat)] = count
            } else if kind == 1 {
                let range = ranges[ordinal - 1]
                summaries[range]?.count += count
                summaries[range]?.senders.insert(UserID(user))
            }
        }
    }
}
