import HeraldPluginAPI

extension FuzzTarget {
    /// The JSON parser: what parses re-encodes to bytes that parse to the same value; what does not gets
    /// an offset inside the input.
    static let json = FuzzTarget(name: "json", summary: "the JSON parser (JSONValue.parse)") { input in
        switch JSONValue.parse(input) {
        case .success(let value):
            guard case .success(let again) = JSONValue.parse(value.jsonBytes), again == value else {
                violated("a parsed value does not survive re-encoding", input)
            }
        case .failure(let error):
            if error.message.isEmpty || error.offset < 0 || error.offset > input.count {
                violated("a syntax error at offset \(error.offset) with message \"\(error.message)\"", input)
            }
        }
    }

    /// The event payload decoder with field mappings. The first byte picks the kind, the mapping and
    /// the bindings; the rest is the payload. It decides as reading the whole parsed document does, and a
    /// decoded event, written back in Herald's own shape, decodes to the same event.
    static let payload = FuzzTarget(name: "payload", summary: "the event payload decoder with field mappings") { input in
        guard let selector = input.first else { return }
        let payload = Array(input.dropFirst())
        let kinds = PayloadKind.allCases
        let kind = kinds[Int(selector) % kinds.count]
        var mapping = FieldMapping()
        if selector & 0x10 != 0 {
            mapping.id = "/m/id"
            mapping.from = "/m/author/0"
            mapping.body = "/m/text"
            mapping.sentAt = "/m/at"
            mapping.type = "/kind"
        }
        let bindings = PayloadBindings(chat: selector & 0x20 != 0 ? "c1" : nil, user: selector & 0x40 != 0 ? "u1" : nil)
        let formats = TimeFormat.allCases
        let format = formats[Int(selector >> 6 & 1 | (selector >> 2 & 2)) % formats.count]
        let decoder = EventPayloadDecoder(maxPayloadBytes: 4096, mapping: mapping, timeFormat: format)
        let decoded = decoder.decode(payload, as: kind, bindings: bindings, receivedAt: Timestamp(milliseconds: 1_700_000_000_000))
        // The decoder reads an object in one pass that keeps only the mapped fields; parsing the whole
        // document and reading it through the pointers must decide the same.
        if payload.count <= 4096, String(validating: payload, as: UTF8.self) != nil {
            let whole: Result<ChatEvent, Rejection> = switch JSONValue.parse(payload) {
            case .success(let document):
                decoder.decode(document: document, as: kind, bindings: bindings, receivedAt: Timestamp(milliseconds: 1_700_000_000_000))
            case .failure(let error):
                .failure(Rejection(.malformedJSON, "payload is not valid JSON: \(error.message) at byte \(error.offset)"))
            }
            if decoded != whole { violated("the one-pass reader decided \(decoded), the whole document \(whole)", input) }
        }
        switch decoded {
        case .failure(let rejection):
            checkRejection(rejection, input)
        case .success(let event):
            checkIdentifiers(event, input)
            if let chat = bindings.chat, event.chat != chat { violated("the event's chat is not the bound one", input) }
            let again = EventPayloadDecoder(maxPayloadBytes: 1 << 20, timeFormat: .unixMilliseconds)
                .decode(event.heraldPayload.jsonBytes, as: .fromPayload, bindings: PayloadBindings(chat: event.chat, user: event.actingUser),
                        receivedAt: Timestamp(milliseconds: 0))
            guard case .success(let decoded) = again, decoded == event else {
                violated("the decoded event \(event) does not survive re-encoding: \(again)", input)
            }
        }
    }
}

extension ChatEvent {
    /// The event in Herald's own payload shape, with its `type`.
    var heraldPayload: JSONValue {
        var fields: [String: JSONValue] = ["type": .string(kind.rawValue), "chat": .string(chat.rawValue)]
        switch self {
        case .messageReceived(let message):
            fields["id"] = .string(message.id.rawValue)
            fields["from"] = .string(message.sender.rawValue)
            fields["body"] = .string(message.body)
            fields["sent_at"] = .number(Double(message.sentAt.milliseconds))
            if let recipients = message.recipients { fields["to"] = .array(recipients.map { .string($0.rawValue) }) }
        case .messagesRead(let read):
            fields["up_to"] = .string(read.upTo.rawValue)
            fields["read_at"] = .number(Double(read.readAt.milliseconds))
        case .chatCreated(let created):
            fields["members"] = .array(created.members.map { .string($0.rawValue) })
        case .chatOpened, .chatClosed:
            break
        }
        return .object(fields)
    }

    /// The user a client event acts for (bound from the topic when decoding again).
    var actingUser: UserID? {
        switch self {
        case .messagesRead(let read): read.reader
        case .chatOpened(let focus), .chatClosed(let focus): focus.user
        case .messageReceived, .chatCreated: nil
        }
    }
}
