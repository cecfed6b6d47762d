public import HeraldPluginAPI

/// What tests, benchmarks and store copies read to compare stores, in the same form for every backend.
public protocol ChatStoreInspection: ChatStore {
    /// The model tables (not the outbox or presence) as sorted lines, equal for equal models on any backend.
    func modelSnapshot() throws -> [String]
    /// Every (user, chat) unread counter that exists or should, next to a recount from stored messages.
    func unreadAgainstRecount() throws -> [CounterDrift]
    /// The same recount in one pass, keeping only the counters that differ and how many were checked: what
    /// `herald store verify` reads, in memory that follows the drift, not the store.
    func unreadDrift() throws -> UnreadDrift
    /// Whether a message is committed: one key lookup, cheap enough to poll.
    func containsMessage(chat: ChatID, id: MessageID) throws -> Bool
    /// Per stored message, its `sent_at` and `received_at − sent_at` (apply time minus send time),
    /// both in milliseconds: the benchmark's publish→commit latency.
    func messageLatenciesMilliseconds() throws -> [(sentAt: Int64, latency: Int64)]
}

/// The lines of ``ChatStoreInspection/modelSnapshot()``: one per row, fields separated by `|`.
public enum ModelSnapshotLine {
    /// A message.
    public static func message(chat: String, id: String, sender: String, body: String, sentAt: Int64) -> String {
        "m|\(chat)|\(id)|\(sender)|\(body)|\(sentAt)"
    }
    /// A chat and whether its membership was declared.
    public static func chat(_ chat: String, declared: Bool) -> String { "c|\(chat)|\(declared)" }
    /// A member's flags.
    public static func member(chat: String, user: String, declared: Bool, inferred: Bool) -> String {
        "cm|\(chat)|\(user)|\(declared)|\(inferred)"
    }
    /// A read position.
    public static func readPosition(user: String, chat: String, sentAt: Int64, messageID: String) -> String {
        "r|\(user)|\(chat)|\(sentAt)|\(messageID)"
    }
    /// A read waiting for its message.
    public static func pendingRead(chat: String, messageID: String, user: String) -> String { "p|\(chat)|\(messageID)|\(user)" }
    /// An unread counter (a counter at 0 has no row, so no line).
    public static func unread(user: String, chat: String, count: Int) -> String { "u|\(user)|\(chat)|\(count)" }
}
