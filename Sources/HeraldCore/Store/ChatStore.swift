public import HeraldPluginAPI

/// Where a message sits in its chat's order: messages are ordered by (sentAt, id).
public struct MessageKey: Hashable, Comparable, Sendable {
    /// Send time.
    public var sentAt: Timestamp
    /// Message id (tie-breaker).
    public var id: MessageID

    /// Creates a key.
    public init(sentAt: Timestamp, id: MessageID) {
        self.sentAt = sentAt
        self.id = id
    }

    /// Chat order.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.sentAt, lhs.id.rawValue) < (rhs.sentAt, rhs.id.rawValue)
    }
}

/// The chat store: messages, memberships, read positions, unread counters, presence, the outbox
/// and the dead-letter queue. Only the ``EventRouter`` changes it, through ``write(_:)``.
///
/// Requirements for a backend (SQLite now, PostgreSQL later; both must pass the same suite):
/// - ``write(_:)`` runs the body in one serialisable transaction: all of it commits or none does,
///   and it is durable when `write` returns.
/// - Reads never block the writer for long and see only committed data.
public protocol ChatStore: Sendable {
    /// Runs `body` in one write transaction.
    func write<T>(_ body: (any ChatTransaction) throws -> T) throws -> T

    /// A user's badge (unread total and per chat).
    func badge(for user: UserID) throws -> BadgeUpdate
    /// Up to `limit` outbox entries for `sink` with a sequence above `after`, oldest first.
    func pendingOutputs(sink: String, after: Int64, limit: Int) throws -> [OutboxEnvelope]
    /// Removes `sink`'s entries up to and including `sequence` (sinks confirm in order).
    func removeOutputs(sink: String, through sequence: Int64) throws
    /// Counts a failed delivery attempt for the entries.
    func recordFailedAttempt(sink: String, sequences: [Int64]) throws
    /// Number of undelivered entries per sink.
    func outboxDepth() throws -> [String: Int]
    /// Dead-lettered inputs, oldest first.
    func deadLetters(limit: Int, includeReplayed: Bool) throws -> [DeadLetter]
    /// Summary counts for tests, status and benchmarks.
    func statistics() throws -> StoreStatistics
    /// A source's committed checkpoint, or `nil`.
    func checkpoint(source: String, key: String) throws -> String?
    /// Moves an undeliverable output from `sink`'s outbox to the dead-letter queue, in one transaction.
    func deadLetterOutput(_ envelope: OutboxEnvelope, sink: String, rejection: Rejection, at time: Timestamp) throws
}

/// The domain primitives the router composes inside one transaction.
public protocol ChatTransaction {
    /// Stores a message unless (chat, id) exists. Returns `false` for a duplicate.
    func insertMessage(_ message: MessageReceived, receivedAt: Timestamp) throws -> Bool
    /// The order key of a stored message.
    func messageKey(chat: ChatID, id: MessageID) throws -> MessageKey?
    /// Members that count: declared ones if the chat was created, else everyone who sent or received.
    func members(of chat: ChatID) throws -> Set<UserID>
    /// Both membership sets of a chat in one read.
    func membership(of chat: ChatID) throws -> ChatMembership
    /// Adds members; `declared` for `chat.created`, inferred for message participants.
    func addMembers(_ users: [UserID], to chat: ChatID, declared: Bool) throws

    /// The newest message a user has read in a chat.
    func readPosition(user: UserID, chat: ChatID) throws -> MessageKey?
    /// Every read position in a chat.
    func readPositions(chat: ChatID) throws -> [UserID: MessageKey]
    /// Moves a read position (the router only moves it forward).
    func setReadPosition(user: UserID, chat: ChatID, to key: MessageKey) throws
    /// Remembers a read of a message that is not stored yet.
    func addPendingRead(user: UserID, chat: ChatID, upTo: MessageID, readAt: Timestamp) throws
    /// Removes and returns the pending reads that point at a message that has just arrived.
    func takePendingReads(chat: ChatID, upTo: MessageID) throws -> [(user: UserID, readAt: Timestamp)]

    /// Unread count for (user, chat).
    func unread(user: UserID, chat: ChatID) throws -> Int
    /// Adds one to the unread count.
    func incrementUnread(user: UserID, chat: ChatID) throws
    /// Sets the unread count (0 removes the row).
    func setUnread(user: UserID, chat: ChatID, count: Int) throws
    /// Counts messages after `position` not sent by `user`: the definition of unread.
    func countUnread(user: UserID, chat: ChatID, after position: MessageKey?) throws -> Int
    /// Senders (other than `reader`) of messages in `(after, through]`.
    func senders(chat: ChatID, after: MessageKey?, through: MessageKey, excluding reader: UserID) throws -> Set<UserID>
    /// A user's badge as stored now.
    func badge(for user: UserID) throws -> BadgeUpdate

    /// Every user's focus expiry in a chat.
    func presence(chat: ChatID) throws -> [UserID: Timestamp]
    /// Sets or clears (`nil`) a user's focus on a chat.
    func setPresence(user: UserID, chat: ChatID, until: Timestamp?) throws

    /// Queues an output for each named sink.
    func enqueue(_ output: Output, sinks: [String], at time: Timestamp) throws
    /// Stores a rejected input.
    func deadLetter(_ rejection: Rejection, provenance: Provenance, raw: [UInt8]) throws
    /// Stores (or, for a `nil` value, removes) a source checkpoint.
    func saveCheckpoint(_ checkpoint: SourceCheckpoint, at time: Timestamp) throws
    /// Marks a dead-lettered input as replayed successfully.
    func markReplayed(deadLetter id: Int64, at time: Timestamp) throws
}

/// A chat's membership as stored: whether `chat.created` declared it, and both member sets.
public struct ChatMembership: Sendable, Hashable {
    /// `nil` when the chat is unknown.
    public var declared: Bool?
    /// Members named by `chat.created` events.
    public var declaredMembers: Set<UserID>
    /// Everyone who sent or received a message in the chat.
    public var inferredMembers: Set<UserID>

    /// Creates a value.
    public init(declared: Bool?, declaredMembers: Set<UserID>, inferredMembers: Set<UserID>) {
        self.declared = declared
        self.declaredMembers = declaredMembers
        self.inferredMembers = inferredMembers
    }

    /// The members that count: declared if the chat was created, else inferred.
    public var effective: Set<UserID> { declared == true ? declaredMembers : inferredMembers }
}

/// One dead-lettered input.
public struct DeadLetter: Sendable, Hashable {
    /// Row id.
    public var id: Int64
    /// Why it was rejected.
    public var rejection: Rejection
    /// Where it came from.
    public var provenance: Provenance
    /// The raw bytes.
    public var raw: [UInt8]
    /// When it was replayed successfully, if it was.
    public var replayedAt: Timestamp?

    /// Creates a value.
    public init(id: Int64, rejection: Rejection, provenance: Provenance, raw: [UInt8], replayedAt: Timestamp?) {
        self.id = id
        self.rejection = rejection
        self.provenance = provenance
        self.raw = raw
        self.replayedAt = replayedAt
    }
}

/// Row counts of the store.
public struct StoreStatistics: Sendable, Hashable {
    /// Stored messages.
    public var messages: Int
    /// Dead letters not yet replayed.
    public var deadLetters: Int
    /// Undelivered outbox entries.
    public var outbox: Int

    /// Creates a value.
    public init(messages: Int, deadLetters: Int, outbox: Int) {
        self.messages = messages
        self.deadLetters = deadLetters
        self.outbox = outbox
    }
}
