public import HeraldCore
public import HeraldPluginAPI
import PostgresNIO

extension PostgresChatStore: ChatStoreInspection {
    /// The model tables as sorted lines (see ``ModelSnapshotLine``).
    public func modelSnapshot() throws -> [String] {
        try read { session in
            var lines: [String] = []
            for row in try session.query("SELECT chat, id, sender, body, sent_at FROM messages") {
                let (chat, id, sender, body, sentAt) = try row.decode((String, String, String, String, Int64).self)
                lines.append(ModelSnapshotLine.message(chat: chat, id: id, sender: sender, body: body, sentAt: sentAt))
            }
            for row in try session.query("SELECT chat, declared FROM chats") {
                let (chat, declared) = try row.decode((String, Bool).self)
                lines.append(ModelSnapshotLine.chat(chat, declared: declared))
            }
            for row in try session.query("SELECT chat, user_id, declared, inferred FROM chat_members") {
                let (chat, user, declared, inferred) = try row.decode((String, String, Bool, Bool).self)
                lines.append(ModelSnapshotLine.member(chat: chat, user: user, declared: declared, inferred: inferred))
            }
            for row in try session.query("SELECT user_id, chat, sent_at, message_id FROM read_positions") {
                let (user, chat, sentAt, id) = try row.decode((String, String, Int64, String).self)
                lines.append(ModelSnapshotLine.readPosition(user: user, chat: chat, sentAt: sentAt, messageID: id))
            }
            for row in try session.query("SELECT chat, message_id, user_id FROM pending_reads") {
                let (chat, id, user) = try row.decode((String, String, String).self)
                lines.append(ModelSnapshotLine.pendingRead(chat: chat, messageID: id, user: user))
            }
            for row in try session.query("SELECT user_id, chat, unread FROM unread_counters") {
                let (user, chat, count) = try row.decode((String, String, Int).self)
                lines.append(ModelSnapshotLine.unread(user: user, chat: chat, count: count))
            }
            return lines.sorted()
        }
    }

    /// Whether a message is committed.
    public func containsMessage(chat: ChatID, id: MessageID) throws -> Bool {
        try read { session in try !session.query("SELECT 1 FROM messages WHERE chat = \(chat.rawValue) AND id = \(id.rawValue)").isEmpty }
    }

    /// Per stored message, its `sent_at` and `received_at − sent_at` in milliseconds.
    public func messageLatenciesMilliseconds() throws -> [(sentAt: Int64, latency: Int64)] {
        try read { session in
            try session.query("SELECT sent_at, received_at - sent_at FROM messages").map { row in
                let (sentAt, latency) = try row.decode((Int64, Int64).self)
                return (sentAt: sentAt, latency: latency)
            }
        }
    }

    /// Every counter that exists or should, next to a recount from stored messages.
    public func unreadAgainstRecount() throws -> [CounterDrift] {
        try read { session in
            try session.query("\(unescaped: Self.countedUnread) SELECT user_id, chat, stored, recounted FROM counted").map { row in
                let (user, chat, stored, recounted) = try row.decode((String, String, Int, Int).self)
                return CounterDrift(user: UserID(user), chat: ChatID(chat), stored: stored, recounted: recounted)
            }
        }
    }

    /// Every counter checked against a recount in one statement, without the statement timeout (it reads
    /// every message); only those that differ come back row by row.
    public func unreadDrift() throws -> UnreadDrift {
        try read(unlimited: true) { session in
            var drift = UnreadDrift(counters: 0, users: 0, differing: [])
            for row in try session.query("""
                \(unescaped: Self.countedUnread)
                SELECT user_id, chat, stored, recounted FROM counted WHERE stored <> recounted
                UNION ALL SELECT NULL, NULL, count(*)::int, count(DISTINCT user_id)::int FROM counted
                """) {
                let (user, chat, first, second) = try row.decode((String?, String?, Int, Int).self)
                if let user, let chat {
                    drift.differing.append(CounterDrift(user: UserID(user), chat: ChatID(chat), stored: first, recounted: second))
                } else {
                    (drift.counters, drift.users) = (first, second)
                }
            }
            drift.differing.sort { ($0.user, $0.chat) < ($1.user, $1.chat) }
            return drift
        }
    }

    /// `counted(user_id, chat, stored, recounted)`, computed once: the members that count and every
    /// stored counter, each with its stored count and a recount of the chat's messages after the user's
    /// read position that the user did not send.
    static let countedUnread = """
        WITH members AS (
            SELECT m.user_id, m.chat FROM chat_members m JOIN chats c ON c.chat = m.chat
            WHERE (c.declared AND m.declared) OR (NOT c.declared AND m.inferred)),
        pairs AS (SELECT user_id, chat FROM members UNION SELECT user_id, chat FROM unread_counters),
        counted AS MATERIALIZED (
            SELECT p.user_id, p.chat,
                coalesce((SELECT unread FROM unread_counters u WHERE u.user_id = p.user_id AND u.chat = p.chat), 0) AS stored,
                CASE WHEN EXISTS (SELECT 1 FROM members x WHERE x.user_id = p.user_id AND x.chat = p.chat) THEN
                    (SELECT count(*) FROM messages m LEFT JOIN read_positions r ON r.user_id = p.user_id AND r.chat = p.chat
                     WHERE m.chat = p.chat AND m.sender <> p.user_id
                       AND (r.user_id IS NULL OR (m.sent_at, m.id) > (r.sent_at, r.message_id)))::int
                ELSE 0 END AS recounted
            FROM pairs p)
        """
}
