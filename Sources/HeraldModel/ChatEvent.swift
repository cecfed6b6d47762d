/// A source-agnostic fact about chats, named in the past tense. Events carry no trace of the
/// adapter, topic or URL they came from: that travels beside them as `Provenance`.
public enum ChatEvent: Hashable, Codable, Sendable {
    /// A message was sent into a chat.
    case messageReceived(MessageReceived)
    /// A user read a chat up to a message.
    case messagesRead(MessagesRead)
    /// A chat was created with its members.
    case chatCreated(ChatCreated)
    /// A user is now looking at a chat.
    case chatOpened(ChatFocus)
    /// A user stopped looking at a chat.
    case chatClosed(ChatFocus)

    /// The event's kind as written in configs, logs and the dead-letter queue.
    public var kind: ChatEventKind {
        switch self {
        case .messageReceived: .messageReceived
        case .messagesRead: .messagesRead
        case .chatCreated: .chatCreated
        case .chatOpened: .chatOpened
        case .chatClosed: .chatClosed
        }
    }

    /// The chat the event is about.
    public var chat: ChatID {
        switch self {
        case .messageReceived(let event): event.chat
        case .messagesRead(let event): event.chat
        case .chatCreated(let event): event.chat
        case .chatOpened(let event), .chatClosed(let event): event.chat
        }
    }
}

/// The names of the event kinds (`message.received`, …).
public enum ChatEventKind: String, CaseIterable, Codable, Sendable {
    /// ``ChatEvent/messageReceived(_:)``
    case messageReceived = "message.received"
    /// ``ChatEvent/messagesRead(_:)``
    case messagesRead = "messages.read"
    /// ``ChatEvent/chatCreated(_:)``
    case chatCreated = "chat.created"
    /// ``ChatEvent/chatOpened(_:)``
    case chatOpened = "chat.opened"
    /// ``ChatEvent/chatClosed(_:)``
    case chatClosed = "chat.closed"
}

/// A message sent into a chat.
public struct MessageReceived: Hashable, Codable, Sendable {
    /// The chat.
    public var chat: ChatID
    /// The message id, unique within the chat; redeliveries carry the same id.
    public var id: MessageID
    /// Who sent it.
    public var sender: UserID
    /// Intended recipients, when the source names them; used as members when no `chat.created` is known.
    public var recipients: [UserID]?
    /// The message text.
    public var body: String
    /// When the sender sent it; messages are ordered by (sentAt, id).
    public var sentAt: Timestamp

    /// Creates the event.
    public init(chat: ChatID, id: MessageID, sender: UserID, recipients: [UserID]? = nil, body: String, sentAt: Timestamp) {
        self.chat = chat
        self.id = id
        self.sender = sender
        self.recipients = recipients
        self.body = body
        self.sentAt = sentAt
    }
}

/// A user read a chat up to and including a message.
public struct MessagesRead: Hashable, Codable, Sendable {
    /// Who read; always taken from an access-controlled place (topic, connection), never a payload.
    public var reader: UserID
    /// The chat.
    public var chat: ChatID
    /// The newest message the reader has seen.
    public var upTo: MessageID
    /// When the read happened.
    public var readAt: Timestamp

    /// Creates the event.
    public init(reader: UserID, chat: ChatID, upTo: MessageID, readAt: Timestamp) {
        self.reader = reader
        self.chat = chat
        self.upTo = upTo
        self.readAt = readAt
    }
}

/// A chat was created.
public struct ChatCreated: Hashable, Codable, Sendable {
    /// The chat.
    public var chat: ChatID
    /// Its members.
    public var members: [UserID]

    /// Creates the event.
    public init(chat: ChatID, members: [UserID]) {
        self.chat = chat
        self.members = members
    }
}

/// A user's focus on a chat (opened or closed).
public struct ChatFocus: Hashable, Codable, Sendable {
    /// The user; taken from an access-controlled place, never a payload.
    public var user: UserID
    /// The chat.
    public var chat: ChatID

    /// Creates the event.
    public init(user: UserID, chat: ChatID) {
        self.user = user
        self.chat = chat
    }
}
