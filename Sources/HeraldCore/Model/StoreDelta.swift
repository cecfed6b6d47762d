public import HeraldPluginAPI

/// Everything one batch changes in the store, written set-based in one transaction.
///
/// Every part is safe to apply again after a lost connection and alongside other writers: messages
/// are inserted unless (chat, id) exists, membership flags only turn on, read positions only move
/// forward, unread counters change by deltas, and pending reads, presence and checkpoints are keyed
/// upserts.
public struct StoreDelta: Hashable, Sendable {
    /// New messages, with the time the router applied them.
    public var messages: [NewMessage] = []
    /// Chats to record; `true` when `chat.created` declared the membership.
    public var chats: [ChatID: Bool] = [:]
    /// Membership flags to turn on.
    public var members: [MemberFlags] = []
    /// Read positions to move forward.
    public var readPositions: [ReadPosition] = []
    /// Reads of messages not stored yet.
    public var pendingReadsAdded: [PendingRead] = []
    /// Messages whose waiting reads resolved (all their pending reads go).
    public var pendingReadsResolved: [MessageRef] = []
    /// Changes of unread counters (a counter that reaches 0 is removed).
    public var unreadDeltas: [UnreadDelta] = []
    /// Focus changes: a new expiry, or `nil` to clear.
    public var presence: [PresenceChange] = []
    /// Outputs to queue, one row per sink.
    public var outbox: [OutboxRow] = []
    /// Rejected inputs.
    public var deadLetters: [NewDeadLetter] = []
    /// Source checkpoints to store (or, for a `nil` value, remove).
    public var checkpoints: [SourceCheckpoint] = []
    /// When the checkpoints were written.
    public var checkpointTime = Timestamp(milliseconds: 0)

    /// Creates an empty delta.
    public init() {}

    /// Whether it changes nothing.
    public var isEmpty: Bool {
        messages.isEmpty && chats.isEmpty && members.isEmpty && readPositions.isEmpty && pendingReadsAdded.isEmpty
            && pendingReadsResolved.isEmpty && unreadDeltas.isEmpty && presence.isEmpty && outbox.isEmpty
            && deadLetters.isEmpty && checkpoints.isEmpty
    }
}

/// A message to store.
public struct NewMessage: Hashable, Sendable {
    /// The message.
    public var message: MessageReceived
    /// When the router applied it.
    public var receivedAt: Timestamp

    /// Creates a value.
    public init(message: MessageReceived, receivedAt: Timestamp) {
        self.message = message
        self.receivedAt = receivedAt
    }
}

/// Membership flags of one user in one chat (a flag that is `false` is left as stored).
public struct MemberFlags: Hashable, Sendable {
    /// The chat.
    public var chat: ChatID
    /// The user.
    public var user: UserID
    /// Named by `chat.created`.
    public var declared: Bool
    /// Sent or received a message in the chat.
    public var inferred: Bool

    /// Creates a value.
    public init(chat: ChatID, user: UserID, declared: Bool, inferred: Bool) {
        self.chat = chat
        self.user = user
        self.declared = declared
        self.inferred = inferred
    }
}

/// The newest message a user has read in a chat.
public struct ReadPosition: Hashable, Sendable {
    /// The reader.
    public var user: UserID
    /// The chat.
    public var chat: ChatID
    /// The message read up to.
    public var key: MessageKey

    /// Creates a value.
    public init(user: UserID, chat: ChatID, key: MessageKey) {
        self.user = user
        self.chat = chat
        self.key = key
    }
}

/// A read of a message that is not stored yet.
public struct PendingRead: Hashable, Sendable {
    /// The message read up to.
    public var message: MessageRef
    /// The reader.
    public var user: UserID
    /// When the client read it.
    public var readAt: Timestamp

    /// Creates a value.
    public init(message: MessageRef, user: UserID, readAt: Timestamp) {
        self.message = message
        self.user = user
        self.readAt = readAt
    }
}

/// A change of one unread counter.
public struct UnreadDelta: Hashable, Sendable {
    /// The user.
    public var user: UserID
    /// The chat.
    public var chat: ChatID
    /// How much to add (negative to subtract).
    public var delta: Int

    /// Creates a value.
    public init(user: UserID, chat: ChatID, delta: Int) {
        self.user = user
        self.chat = chat
        self.delta = delta
    }
}

/// A user's focus on a chat: until when, or `nil` when it ended.
public struct PresenceChange: Hashable, Sendable {
    /// The user.
    public var user: UserID
    /// The chat.
    public var chat: ChatID
    /// The expiry, or `nil` to clear.
    public var until: Timestamp?

    /// Creates a value.
    public init(user: UserID, chat: ChatID, until: Timestamp?) {
        self.user = user
        self.chat = chat
        self.until = until
    }
}

/// One outbox row: an output for one sink.
///
/// The row keeps the output as a value and encodes it only when it is written: a commit's outputs wait
/// for the whole batch to be applied, and as values they share their text with the batch's events where
/// their encoded bytes would each be a copy.
public struct OutboxRow: Hashable, Sendable {
    /// The sink that delivers it.
    public var sink: String
    /// The output.
    public var output: Output
    /// When the record that produced it was received.
    public var createdAt: Timestamp

    /// Creates a value.
    public init(sink: String, output: Output, createdAt: Timestamp) {
        self.sink = sink
        self.output = output
        self.createdAt = createdAt
    }

    /// The output's recipient.
    public var recipient: UserID { output.recipient }
    /// The output's kind.
    public var kind: OutputKind { output.kind }
    /// The output in its wire format (``OutputWireFormat``), encoded on each call.
    public var payload: [UInt8] { OutputWireFormat.encode(output) }
}

/// A rejected input to dead-letter.
public struct NewDeadLetter: Hashable, Sendable {
    /// Why it was rejected.
    public var rejection: Rejection
    /// Where it came from.
    public var provenance: Provenance
    /// Its raw bytes.
    public var raw: [UInt8]

    /// Creates a value.
    public init(rejection: Rejection, provenance: Provenance, raw: [UInt8]) {
        self.rejection = rejection
        self.provenance = provenance
        self.raw = raw
    }
}

extension NewMessage {
    /// What of a delta's `messages` is left to insert after `stored` went ahead of it
    /// (``ChatTransaction/storeMessagesAhead(_:)``): nothing when the two lists agree, as they do when the
    /// router planned them; otherwise each message whose (chat, id) did not go ahead.
    public static func remaining(_ messages: [NewMessage], after stored: [NewMessage]) -> [NewMessage] {
        // The lists agree when each message has the same (chat, id) as its peer: compared in place, without
        // a copy of either.
        let agree = messages.count == stored.count && messages.indices.allSatisfy { index in
            messages[index].message.chat == stored[index].message.chat && messages[index].message.id == stored[index].message.id
        }
        guard !agree else { return [] }
        let refs = Set(stored.map { MessageRef(chat: $0.message.chat, id: $0.message.id) })
        return messages.filter { !refs.contains(MessageRef(chat: $0.message.chat, id: $0.message.id)) }
    }
}
