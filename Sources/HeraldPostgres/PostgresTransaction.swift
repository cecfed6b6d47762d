import HeraldCore
import HeraldPluginAPI
import PostgresNIO

/// ``ChatTransaction`` over one PostgreSQL connection inside `BEGIN … COMMIT`. Every set of keys goes
/// to the server as arrays (`= ANY($1)`, `unnest(…)`), so each load and each kind of write is one
/// statement whatever the batch's size.
struct PostgresTransaction: ChatTransaction {
    let session: PostgresSession

    func loadSlice(_ keys: SliceKeys) throws -> StateSlice {
        var slice = StateSlice()
        let chats = keys.chats.map(\.rawValue)
        let messageChats = keys.messages.map(\.chat.rawValue)
        let messageIDs = keys.messages.map(\.id.rawValue)
        for row in try session.query("""
            SELECT m.chat, m.id, m.sent_at, m.sender FROM unnest(\(messageChats)::text[], \(messageIDs)::text[]) AS k(chat, id)
            JOIN messages m ON m.chat = k.chat AND m.id = k.id
            """) {
            let (chat, id, sentAt, sender) = try row.decode((String, String, Int64, String).self)
            slice.messages[MessageRef(chat: ChatID(chat), id: MessageID(id))] =
                StoredMessage(key: MessageKey(sentAt: Timestamp(milliseconds: sentAt), id: MessageID(id)), sender: UserID(sender))
        }
        for row in try session.query("""
            SELECT k.chat, n.sent_at, n.id FROM unnest(\(chats)::text[]) AS k(chat)
            CROSS JOIN LATERAL (SELECT sent_at, id FROM messages WHERE chat = k.chat ORDER BY sent_at DESC, id DESC LIMIT 1) n
            """) {
            let (chat, sentAt, id) = try row.decode((String, Int64, String).self)
            slice.newestMessage[ChatID(chat)] = MessageKey(sentAt: Timestamp(milliseconds: sentAt), id: MessageID(id))
        }
        for row in try session.query("""
            SELECT c.chat, c.declared, m.user_id, m.declared, m.inferred FROM chats c LEFT JOIN chat_members m ON m.chat = c.chat
            WHERE c.chat = ANY(\(chats))
            """) {
            let (chat, declared, user, declaredMember, inferredMember) = try row.decode((String, Bool, String?, Bool?, Bool?).self)
            var membership = slice.memberships[ChatID(chat)] ?? ChatMembership(declared: declared, declaredMembers: [], inferredMembers: [])
            if let user {
                if declaredMember == true { membership.declaredMembers.insert(UserID(user)) }
                if inferredMember == true { membership.inferredMembers.insert(UserID(user)) }
            }
            slice.memberships[ChatID(chat)] = membership
        }
        for row in try session.query("SELECT chat, user_id, sent_at, message_id FROM read_positions WHERE chat = ANY(\(chats))") {
            let (chat, user, sentAt, id) = try row.decode((String, String, Int64, String).self)
            slice.readPositions[ChatID(chat), default: [:]][UserID(user)] = MessageKey(sentAt: Timestamp(milliseconds: sentAt), id: MessageID(id))
        }
        for row in try session.query("SELECT chat, user_id, until FROM presence WHERE chat = ANY(\(chats))") {
            let (chat, user, until) = try row.decode((String, String, Int64).self)
            slice.presence[ChatID(chat), default: [:]][UserID(user)] = Timestamp(milliseconds: until)
        }
        for row in try session.query("""
            SELECT p.chat, p.message_id, p.user_id, p.read_at FROM unnest(\(messageChats)::text[], \(messageIDs)::text[]) AS k(chat, id)
            JOIN pending_reads p ON p.chat = k.chat AND p.message_id = k.id
            """) {
            let (chat, id, user, readAt) = try row.decode((String, String, String, Int64).self)
            slice.pendingReads[MessageRef(chat: ChatID(chat), id: MessageID(id)), default: [:]][UserID(user)] = Timestamp(milliseconds: readAt)
        }
        return slice
    }

    func loadUnread(users: Set<UserID>) throws -> [UserID: [ChatID: Int]] {
        var counters: [UserID: [ChatID: Int]] = [:]
        for user in users { counters[user] = [:] }
        for row in try session.query("SELECT user_id, chat, unread FROM unread_counters WHERE user_id = ANY(\(users.map(\.rawValue))) AND unread <> 0") {
            let (user, chat, count) = try row.decode((String, String, Int).self)
            counters[UserID(user), default: [:]][ChatID(chat)] = count
        }
        return counters
    }

    func summarise(_ ranges: [StoredRange]) throws -> [StoredRange: StoredRangeSummary] {
        var summaries: [StoredRange: StoredRangeSummary] = [:]
        guard !ranges.isEmpty else { return summaries }
        for range in ranges { summaries[range] = StoredRangeSummary() }
        let low = ranges.map(\.lowerBound)
        let high = ranges.map(\.upperBound)
        for row in try session.query("""
            SELECT k.i, m.sender, count(*) FROM unnest(\(ranges.map(\.chat.rawValue))::text[], \(ranges.map(\.user.rawValue))::text[],
                \(low.map(\.sentAt))::int8[], \(low.map(\.id))::text[], \(high.map(\.sentAt))::int8[], \(high.map(\.id))::text[])
                WITH ORDINALITY AS k(chat, user_id, low_at, low_id, high_at, high_id, i)
            JOIN messages m ON m.chat = k.chat AND (m.sent_at, m.id) > (k.low_at, k.low_id COLLATE "C")
                AND (m.sent_at, m.id) <= (k.high_at, k.high_id COLLATE "C") AND m.sender <> k.user_id
            GROUP BY k.i, m.sender
            """) {
            let (ordinal, sender, count) = try row.decode((Int, String, Int).self)
            let range = ranges[ordinal - 1]
            summaries[range]?.count += count
            summaries[range]?.senders.insert(UserID(sender))
        }
        return summaries
    }
}
