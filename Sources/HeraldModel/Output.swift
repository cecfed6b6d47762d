/// An immutable value built from the store *after* an event changed it, addressed to one user.
/// Sinks turn outputs into whatever clients need; they never see raw events.
public enum Output: Hashable, Codable, Sendable {
    /// Tell a user about a message they are not looking at.
    case notification(InAppNotification)
    /// Show a message live to a user who has the chat open.
    case liveMessage(LiveMessage)
    /// Tell a sender that a reader has read their messages.
    case readReceipt(ReadReceipt)
    /// A user's unread counters changed.
    case badge(BadgeUpdate)

    /// The user the output is for.
    public var recipient: UserID {
        switch self {
        case .notification(let value): value.recipient
        case .liveMessage(let value): value.recipient
        case .readReceipt(let value): value.recipient
        case .badge(let value): value.recipient
        }
    }

    /// The output's kind.
    public var kind: OutputKind {
        switch self {
        case .notification: .notification
        case .liveMessage: .liveMessage
        case .readReceipt: .readReceipt
        case .badge: .badge
        }
    }
}

/// The kinds of ``Output``, as written in configs.
public enum OutputKind: String, CaseIterable, Codable, Sendable {
    /// ``Output/notification(_:)``
    case notification
    /// ``Output/liveMessage(_:)``
    case liveMessage = "live_message"
    /// ``Output/readReceipt(_:)``
    case readReceipt = "read_receipt"
    /// ``Output/badge(_:)``
    case badge
}

/// An in-app notification of a new message.
public struct InAppNotification: Hashable, Codable, Sendable {
    /// Who is notified.
    public var recipient: UserID
    /// The chat.
    public var chat: ChatID
    /// The message.
    public var messageID: MessageID
    /// Who sent it.
    public var sender: UserID
    /// The start of the body, at most the configured number of characters.
    public var preview: String
    /// The recipient's unread total after this message.
    public var badgeTotal: Int

    /// Creates the value.
    public init(recipient: UserID, chat: ChatID, messageID: MessageID, sender: UserID, preview: String, badgeTotal: Int) {
        self.recipient = recipient
        self.chat = chat
        self.messageID = messageID
        self.sender = sender
        self.preview = preview
        self.badgeTotal = badgeTotal
    }

    enum CodingKeys: String, CodingKey {
        case recipient = "user", chat, messageID = "message_id", sender = "from", preview, badgeTotal = "badge"
    }
}

/// A message delivered live to a user who has its chat open.
public struct LiveMessage: Hashable, Codable, Sendable {
    /// Who sees it.
    public var recipient: UserID
    /// The message as stored.
    public var message: MessageReceived

    /// Creates the value.
    public init(recipient: UserID, message: MessageReceived) {
        self.recipient = recipient
        self.message = message
    }

    enum CodingKeys: String, CodingKey { case recipient = "user", message }
}

/// A reader has read a sender's messages up to a point.
public struct ReadReceipt: Hashable, Codable, Sendable {
    /// The sender being told.
    public var recipient: UserID
    /// The chat.
    public var chat: ChatID
    /// The reader's new read position.
    public var upTo: MessageID
    /// Who read.
    public var reader: UserID
    /// When.
    public var readAt: Timestamp

    /// Creates the value.
    public init(recipient: UserID, chat: ChatID, upTo: MessageID, reader: UserID, readAt: Timestamp) {
        self.recipient = recipient
        self.chat = chat
        self.upTo = upTo
        self.reader = reader
        self.readAt = readAt
    }

    enum CodingKeys: String, CodingKey { case recipient = "user", chat, upTo = "up_to", reader, readAt = "read_at" }
}

/// A user's unread counters: the total and the count per chat (chats with none are omitted).
public struct BadgeUpdate: Hashable, Codable, Sendable {
    /// Whose badge.
    public var recipient: UserID
    /// The total number of unread messages.
    public var unread: Int
    /// Unread messages per chat.
    public var chats: [ChatID: Int]

    /// Creates the value.
    public init(recipient: UserID, unread: Int, chats: [ChatID: Int]) {
        self.recipient = recipient
        self.unread = unread
        self.chats = chats
    }

    enum CodingKeys: String, CodingKey { case recipient = "user", unread, chats }
}
