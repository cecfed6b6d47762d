public import HeraldPluginAPI

/// An unread counter beside a recount of the stored messages: the chat's messages after the user's read
/// position that the user did not send (0 for someone who is not a member).
public struct CounterDrift: Hashable, Sendable {
    /// Whose counter.
    public var user: UserID
    /// Which chat.
    public var chat: ChatID
    /// The count the store holds (or held, before a repair).
    public var stored: Int
    /// The recount.
    public var recounted: Int

    /// Creates a value.
    public init(user: UserID, chat: ChatID, stored: Int, recounted: Int) {
        self.user = user
        self.chat = chat
        self.stored = stored
        self.recounted = recounted
    }
}

/// Every unread counter of a store checked against a recount (``ChatStoreInspection/unreadDrift()``).
public struct UnreadDrift: Hashable, Sendable {
    /// Counters checked: every (user, chat) that has a counter or should have one.
    public var counters: Int
    /// The users they belong to.
    public var users: Int
    /// The counters that differ from their recount, by user and chat.
    public var differing: [CounterDrift]

    /// Creates a value.
    public init(counters: Int, users: Int, differing: [CounterDrift]) {
        self.counters = counters
        self.users = users
        self.differing = differing
    }
}
