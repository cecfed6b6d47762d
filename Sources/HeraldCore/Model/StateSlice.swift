public import HeraldPluginAPI

/// A message named by chat and id.
public struct MessageRef: Hashable, Sendable {
    /// The chat.
    public var chat: ChatID
    /// The message id within the chat.
    public var id: MessageID

    /// Creates a reference.
    public init(chat: ChatID, id: MessageID) {
        self.chat = chat
        self.id = id
    }
}

/// What a batch needs to know of one stored message: where it sits and who sent it.
public struct StoredMessage: Hashable, Sendable {
    /// Its place in the chat's order.
    public var key: MessageKey
    /// Its sender.
    public var sender: UserID

    /// Creates a value.
    public init(key: MessageKey, sender: UserID) {
        self.key = key
        self.sender = sender
    }
}

/// The keys a batch touches: what ``ChatTransaction/loadSlice(_:)`` reads.
public struct SliceKeys: Hashable, Sendable {
    /// Every chat an event of the batch names.
    public var chats: Set<ChatID> = []
    /// Every message a `message.received` or `messages.read` of the batch names.
    public var messages: Set<MessageRef> = []

    /// Creates an empty set of keys.
    public init() {}
}

/// The part of the chat model one batch touches, as committed before the batch.
///
/// The store loads it in a few set-based queries (``ChatTransaction``); the router applies the batch to
/// it in memory without I/O and writes the difference back as a ``StoreDelta``. Tests build slices
/// directly.
public struct StateSlice: Hashable, Sendable {
    /// The named messages that are stored (a named message that is absent is not stored).
    public var messages: [MessageRef: StoredMessage] = [:]
    /// The newest stored message of each touched chat that has any.
    public var newestMessage: [ChatID: MessageKey] = [:]
    /// Membership of each touched chat that is known.
    public var memberships: [ChatID: ChatMembership] = [:]
    /// Every read position in each touched chat.
    public var readPositions: [ChatID: [UserID: MessageKey]] = [:]
    /// Reads waiting for a named message that is not stored yet: reader and read time.
    public var pendingReads: [MessageRef: [UserID: Timestamp]] = [:]
    /// Every user's focus expiry in each touched chat.
    public var presence: [ChatID: [UserID: Timestamp]] = [:]
    /// Every unread counter of each loaded user (a loaded user without counters maps to an empty table).
    public var unread: [UserID: [ChatID: Int]] = [:]
    /// Stored messages in the ranges the batch may count (see ``StoredRange``).
    public var ranges: [StoredRange: StoredRangeSummary] = [:]

    /// Creates an empty slice.
    public init() {}
}

/// Stored messages of one chat in `(after, through]`, leaving out those `user` sent: what an unread
/// recount and a read receipt need to know of messages stored before the batch.
public struct StoredRange: Hashable, Sendable {
    /// The chat.
    public var chat: ChatID
    /// The user whose own messages do not count.
    public var user: UserID
    /// Exclusive lower bound; `nil` is the chat's start.
    public var after: MessageKey?
    /// Inclusive upper bound; `nil` is the chat's end.
    public var through: MessageKey?

    /// Creates a range.
    public init(chat: ChatID, user: UserID, after: MessageKey?, through: MessageKey?) {
        self.chat = chat
        self.user = user
        self.after = after
        self.through = through
    }
}

extension StoredRange {
    /// The lower bound as a (send time, id) pair for SQL, the lowest pair when the range is open below.
    public var lowerBound: (sentAt: Int64, id: String) { after.map { ($0.sentAt.milliseconds, $0.id.rawValue) } ?? (Int64.min, "") }
    /// The upper bound as a (send time, id) pair for SQL, the highest pair when the range is open above.
    public var upperBound: (sentAt: Int64, id: String) { through.map { ($0.sentAt.milliseconds, $0.id.rawValue) } ?? (Int64.max, "\u{10FFFF}") }
}

/// What a ``StoredRange`` holds.
public struct StoredRangeSummary: Hashable, Sendable {
    /// Messages in the range not sent by the range's user.
    public var count: Int
    /// Their distinct senders.
    public var senders: Set<UserID>

    /// Creates a summary.
    public init(count: Int = 0, senders: Set<UserID> = []) {
        self.count = count
        self.senders = senders
    }
}

/// A slice did not hold what the batch needed: a defect in the batch plan, never bad input.
public struct StateSliceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was missing.
    public var description: String

    /// Creates the error.
    public init(_ description: String) { self.description = description }
}
