import HeraldCore
import HeraldPluginAPI
import PostgresNIO

/// ``ChatTransaction`` over one PostgreSQL connection inside `BEGIN … COMMIT`. Every set of keys goes
/// to the server as arrays (`= ANY($1)`, `unnest(…)`), so each load and each kind of write is one
/// statement whatever the batch's size.
struct PostgresTransaction: ChatTransaction {
    let session: PostgresSession
    /// What this store's `NOTIFY` carries (``PostgresChatStore/notificationPayload``).
    let notificationPayload: String
    /// The channel that `NOTIFY` goes to (``PostgresStoreSettings/outboxChannel``).
    let outboxChannel: String
    /// The batch's new messages sent ahead of its delta (``storeMessagesAhead(_:)``), until ``write(_:)``.
    let ahead = AheadMessages()

    /// The slice in one statement, `herald_load_slice` (``PostgresReadFunctions/slice``): it takes the
    /// transaction's chat locks, then reads each part of the slice after them.
    func loadSlice(_ keys: SliceKeys) throws -> StateSlice {
        var slice = StateSlice()
        let chats = keys.chats.map(\.rawValue)
        let messageChats = keys.messages.map(\.chat.rawValue)
        let messageIDs = keys.messages.map(\.id.rawValue)
        let rows = try session.query("SELECT * FROM herald_load_slice(\(chats)::text[], \(messageChats)::text[], \(messageIDs)::text[])")
        for row in rows {
            var columns = RowColumns(row)
            let kind = try columns.next(Int.self), chatName = try columns.next(String.self)
            let id = try columns.next(String?.self), user = try columns.next(String?.self), time = try columns.next(Int64?.self)
            let declared = try columns.next(Bool?.self), declaredMember = try columns.next(Bool?.self)
            let inferredMember = try columns.next(Bool?.self)
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

    /// Both counter loads in one statement, `herald_load_counters` (``PostgresReadFunctions/counters``):
    /// the users' unread counters (kind 0), and per range (its ordinal) and sender the stored messages in
    /// it (kind 1).
    func loadCounters(users: Set<UserID>, ranges: [StoredRange], into slice: inout StateSlice) throws {
        slice.unread = Dictionary(uniqueKeysWithValues: users.map { ($0, [:]) })
        var summaries: [StoredRange: StoredRangeSummary] = [:]
        for range in ranges { summaries[range] = StoredRangeSummary() }
        defer { slice.ranges = summaries }
        guard !users.isEmpty || !ranges.isEmpty else { return }
        let low = ranges.map(\.lowerBound)
        let high = ranges.map(\.upperBound)
        for row in try session.query("""
            SELECT * FROM herald_load_counters(\(users.map(\.rawValue))::text[], \(ranges.map(\.chat.rawValue))::text[],
                \(ranges.map(\.user.rawValue))::text[], \(low.map(\.sentAt))::int8[], \(low.map(\.id))::text[],
                \(high.map(\.sentAt))::int8[], \(high.map(\.id))::text[])
            """) {
            var columns = RowColumns(row)
            let kind = try columns.next(Int.self), ordinal = try columns.next(Int.self), user = try columns.next(String.self)
            let chat = try columns.next(String?.self), count = try columns.next(Int.self)
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

/// The statement that stores a batch's messages ahead of its delta, and the messages it carries, between
/// ``PostgresTransaction/storeMessagesAhead(_:)`` and ``PostgresTransaction/write(_:)`` (a transaction is a
/// value; this is the part of it that changes).
final class AheadMessages {
    var sent: (messages: [NewMessage], statement: SentStatement)?
}
