/// JSON pointers that say where each logical field lives in a payload, so payloads that are not in
/// Herald's own shape can be normalised without code. Unset fields use Herald's default shape
/// (`/id`, `/from`, `/to`, `/body`, `/sent_at`, `/chat`, `/up_to`, `/members`, `/state`, `/type`).
public struct FieldMapping: Codable, Sendable, Hashable {
    /// Message id.
    public var id: String?
    /// Message sender.
    public var from: String?
    /// Message recipients (array of strings).
    public var to: String?
    /// Message text.
    public var body: String?
    /// Send time (epoch seconds or milliseconds, or RFC 3339).
    public var sentAt: String?
    /// Chat id, when the topic does not carry it.
    public var chat: String?
    /// Read position (message id).
    public var upTo: String?
    /// Read time; defaults to the receive time.
    public var readAt: String?
    /// Chat members (array of strings).
    public var members: String?
    /// Presence state (`open` / `closed`).
    public var state: String?
    /// Event kind, for subscriptions whose kind comes from the payload.
    public var type: String?
    /// A user the payload names for a client event; if present it must match the topic's user.
    public var user: String?

    /// The default shape.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case id, from, to, body, sentAt = "sent_at", chat, upTo = "up_to", readAt = "read_at", members, state, type, user
    }

    /// Checks that every pointer that is set is a JSON pointer; `keyPath` is where the mapping sits
    /// (e.g. `mapping`, `endpoints[0].mapping`).
    public func validatePointers(keyPath: String) throws(ConfigurationError) {
        for (key, pointer) in configuredPointers where !(pointer.isEmpty || pointer.hasPrefix("/")) {
            throw ConfigurationError("\"\(pointer)\" is not a JSON pointer (it must start with /)", keyPath: "\(keyPath).\(key)")
        }
    }

    /// Every pointer that is set, with its key, for validation.
    public var configuredPointers: [(key: String, pointer: String)] {
        let all: [(String, String?)] = [("id", id), ("from", from), ("to", to), ("body", body), ("sent_at", sentAt),
                                        ("chat", chat), ("up_to", upTo), ("read_at", readAt), ("members", members),
                                        ("state", state), ("type", type), ("user", user)]
        return all.compactMap { key, pointer in pointer.map { (key, $0) } }
    }
}

/// How numeric and string times in payloads are read.
public enum TimeFormat: String, Codable, Sendable, CaseIterable {
    /// Numbers above 10¹¹ are milliseconds, smaller ones seconds; strings are RFC 3339.
    case auto
    /// Epoch seconds (may be fractional).
    case unixSeconds = "unix_s"
    /// Epoch milliseconds.
    case unixMilliseconds = "unix_ms"
    /// RFC 3339 strings.
    case rfc3339
}

/// Which event a payload describes.
public enum PayloadKind: String, Codable, Sendable, CaseIterable {
    /// `message.received`
    case messageReceived = "message.received"
    /// `messages.read`
    case messagesRead = "messages.read"
    /// `chat.created`
    case chatCreated = "chat.created"
    /// `chat.opened` or `chat.closed`, chosen by the payload's `state`.
    case chatPresence = "chat.presence"
    /// `chat.opened`
    case chatOpened = "chat.opened"
    /// `chat.closed`
    case chatClosed = "chat.closed"
    /// Read from the payload's `type` field.
    case fromPayload = "auto"

    /// Whether the acting user must come from an access-controlled place (topic, connection).
    public var isClientEvent: Bool {
        switch self {
        case .messagesRead, .chatPresence, .chatOpened, .chatClosed: true
        case .messageReceived, .chatCreated, .fromPayload: false
        }
    }
}
