import Foundation

/// Values an access-controlled place (an MQTT topic level, an authenticated connection) says about
/// an input. They win over the payload: a payload that names a different user or chat is rejected.
public struct PayloadBindings: Sendable, Hashable {
    /// The chat named by the topic, if any.
    public var chat: ChatID?
    /// The acting user named by the topic, if any.
    public var user: UserID?

    /// Creates bindings.
    public init(chat: ChatID? = nil, user: UserID? = nil) {
        self.chat = chat
        self.user = user
    }
}

/// Turns a JSON payload into a ``ChatEvent`` or a ``Rejection``. Shared by every source that
/// carries JSON, so MQTT, WebSocket and REST payloads normalise identically.
public struct EventPayloadDecoder: Sendable {
    /// Payloads larger than this are rejected before parsing.
    public var maxPayloadBytes: Int
    /// Where fields live in the payload.
    public var mapping: FieldMapping { didSet { pointers = FieldPointers(mapping) } }
    /// `mapping` with its defaults, parsed once.
    private(set) var pointers: FieldPointers
    /// How times are read.
    public var timeFormat: TimeFormat
    /// Longest preview or body accepted, in bytes (bodies are bounded by the payload limit too).
    public static let maxIdentifierLength = 256

    /// Creates a decoder.
    public init(maxPayloadBytes: Int = 64 * 1024, mapping: FieldMapping = FieldMapping(), timeFormat: TimeFormat = .auto) {
        self.maxPayloadBytes = maxPayloadBytes
        self.mapping = mapping
        self.pointers = FieldPointers(mapping)
        self.timeFormat = timeFormat
    }

    /// Normalises one payload.
    /// - Parameters:
    ///   - payload: the raw bytes.
    ///   - kind: what the subscription says the payload is.
    ///   - bindings: chat and user from the access-controlled origin.
    ///   - receivedAt: used for a read without its own time.
    public func decode(_ payload: [UInt8], as kind: PayloadKind, bindings: PayloadBindings,
                       receivedAt: Timestamp) -> Result<ChatEvent, Rejection> {
        do throws(Rejection) {
            guard payload.count <= maxPayloadBytes else {
                throw Rejection(.oversize, "payload is \(payload.count) bytes, the limit is \(maxPayloadBytes)")
            }
            do {
                _ = try UTF8Span(validating: payload.span)  // checks in place, builds no string
            } catch {
                throw Rejection(.invalidUTF8, "payload is not valid UTF-8")
            }
            // An object (every event is one) is read in one pass that keeps only the mapped fields' values;
            // anything else is parsed whole, for the error that names what it is.
            guard Self.startsWithObject(payload) else {
                switch JSONValue.parse(payload) {
                case .success(let document): return decode(document: document, as: kind, bindings: bindings, receivedAt: receivedAt)
                case .failure(let error): throw Self.malformed(error.message, at: error.offset)
                }
            }
            let values: [JSONValue?]
            do {
                values = try JSONParser.capture(payload, pointers.tree)
            } catch {
                throw Self.malformed(error.message, at: error.offset)
            }
            let reader = PayloadReader(fields: .captured(values), pointers: pointers, timeFormat: timeFormat)
            return .success(try event(from: reader, kind: kind, bindings: bindings, receivedAt: receivedAt))
        } catch {
            return .failure(error)
        }
    }

    /// Normalises an already parsed document (for sources whose framing is itself JSON).
    public func decode(document: JSONValue, as kind: PayloadKind, bindings: PayloadBindings,
                       receivedAt: Timestamp) -> Result<ChatEvent, Rejection> {
        do throws(Rejection) {
            guard case .object = document else {
                throw Rejection(.malformedJSON, "payload must be a JSON object, found \(document.typeName)")
            }
            let reader = PayloadReader(fields: .document(document), pointers: pointers, timeFormat: timeFormat)
            return .success(try event(from: reader, kind: kind, bindings: bindings, receivedAt: receivedAt))
        } catch {
            return .failure(error)
        }
    }

    private func event(from reader: PayloadReader, kind: PayloadKind, bindings: PayloadBindings,
                       receivedAt: Timestamp) throws(Rejection) -> ChatEvent {
        let chat = try reader.boundIdentifier(.chat, bound: bindings.chat?.rawValue)
        switch kind {
        case .fromPayload:
            let name = try reader.string(.type)
            let resolved: PayloadKind? = switch name {
            case "message.received": .messageReceived
            case "messages.read": .messagesRead
            case "chat.created": .chatCreated
            case "chat.opened": .chatOpened
            case "chat.closed": .chatClosed
            default: nil
            }
            guard let resolved else { throw Rejection(.unknownEventKind, "unknown event type \"\(name)\"") }
            return try event(from: reader, kind: resolved, bindings: bindings, receivedAt: receivedAt)
        case .messageReceived:
            let sender = try reader.boundIdentifier(.from, bound: bindings.user?.rawValue)
            let recipients = try reader.optionalIdentifiers(.to)
            return .messageReceived(MessageReceived(
                chat: ChatID(chat), id: MessageID(try reader.identifier(.id)),
                sender: UserID(sender), recipients: recipients.map { $0.map { UserID($0) } },
                body: try reader.string(.body), sentAt: try reader.time(.sentAt)))
        case .messagesRead:
            let reader_ = try actingUser(reader, bindings: bindings)
            let readAt = try reader.optionalTime(.readAt) ?? receivedAt
            return .messagesRead(MessagesRead(
                reader: reader_, chat: ChatID(chat),
                upTo: MessageID(try reader.identifier(.upTo)), readAt: readAt))
        case .chatCreated:
            let members = try reader.optionalIdentifiers(.members)
            guard let members, !members.isEmpty else {
                throw Rejection(.missingField, "field members (\(reader.pointers[.members])) must list at least one user")
            }
            return .chatCreated(ChatCreated(chat: ChatID(chat), members: members.map { UserID($0) }))
        case .chatPresence:
            let state = try reader.string(.state)
            switch state {
            case "open": return try event(from: reader, kind: .chatOpened, bindings: bindings, receivedAt: receivedAt)
            case "closed": return try event(from: reader, kind: .chatClosed, bindings: bindings, receivedAt: receivedAt)
            default: throw Rejection(.invalidField, "field state must be \"open\" or \"closed\", found \"\(state)\"")
            }
        case .chatOpened:
            return .chatOpened(ChatFocus(user: try actingUser(reader, bindings: bindings), chat: ChatID(chat)))
        case .chatClosed:
            return .chatClosed(ChatFocus(user: try actingUser(reader, bindings: bindings), chat: ChatID(chat)))
        }
    }

    /// Whether the first byte after any whitespace opens an object.
    private static func startsWithObject(_ payload: [UInt8]) -> Bool {
        payload.first { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 } == UInt8(ascii: "{")
    }

    private static func malformed(_ message: String, at offset: Int) -> Rejection {
        Rejection(.malformedJSON, "payload is not valid JSON: \(message) at byte \(offset)")
    }

    /// The user of a client event: always the bound (topic) user; a payload naming another is refused.
    private func actingUser(_ reader: PayloadReader, bindings: PayloadBindings) throws(Rejection) -> UserID {
        guard let bound = bindings.user else {
            throw Rejection(.identityMismatch, "client events need the acting user from the topic; none is bound")
        }
        let pointer = reader.pointers[.user]
        if let claimed = reader.value(.user), !PayloadReader.names(claimed, bound.rawValue) {
            throw Rejection(.identityMismatch, "payload names user \(claimed.shortText) at \(pointer) but the topic is for \"\(bound)\"")
        }
        return bound
    }
}
