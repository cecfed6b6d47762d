import Foundation
import GRDB
import HeraldPluginAPI

/// State that lives for one write transaction: reads the router repeats within a batch (badges,
/// memberships, read positions, presence), kept current by the transaction's own writes, and the
/// outbox rows, written in bulk as they accumulate.
final class SQLiteTransactionCache {
    var badges: [UserID: BadgeUpdate] = [:]
    var memberships: [ChatID: ChatMembership] = [:]
    var readPositions: [ChatID: [UserID: MessageKey]] = [:]
    var presence: [ChatID: [UserID: Timestamp]] = [:]
    /// Chats with pending reads; `nil` until first needed. A superset is harmless (one query finds none).
    var chatsWithPendingReads: Set<ChatID>?
    /// Outbox rows not yet written (written a statement's worth at a time, and the rest before commit).
    var outbox: [OutboxRow] = []
    /// Outbox rows written per sink by this transaction, added to the row counters before commit.
    var outboxRowsPerSink: [(sink: String, rows: Int)] = []
    /// Unread increments not yet written, per user and chat (written in bulk before commit).
    var unreadIncrements: [UserID: [ChatID: Int]] = [:]
    /// Messages stored and dead letters opened (or, negative, replayed) by this transaction, added to the
    /// row counters (``StoreCounter``) with the outbox rows.
    var messagesStored = 0
    var deadLettersOpened = 0
    /// Bulk insert statements by shape, for this transaction (see ``BulkInsert``).
    var bulkStatements: [BulkStatementKey: Statement] = [:]
    /// The message insert, prepared once per transaction (it runs for every message).
    var insertMessageStatement: Statement?

    struct OutboxRow {
        var sink: String
        var recipient: String
        var kind: String
        var payload: Data
        var createdAt: Int64
    }

    /// Applies an unread change to a cached badge.
    func setUnread(user: UserID, chat: ChatID, to count: Int) {
        guard let previous = badges[user]?.chats[chat.rawValue] ?? (badges[user] == nil ? nil : 0) else { return }
        badges[user]?.unread += count - previous
        badges[user]?.chats[chat.rawValue] = count == 0 ? nil : count
    }

    func addUnread(user: UserID, chat: ChatID) {
        badges[user]?.addUnread(in: chat)  // one lookup; nothing when the badge is not cached
    }
}

private extension BadgeUpdate {
    mutating func addUnread(in chat: ChatID) {
        unread += 1
        chats[chat.rawValue, default: 0] += 1
    }
}
