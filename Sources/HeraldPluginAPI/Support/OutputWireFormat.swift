import Foundation

/// The JSON that clients receive for each output kind, shared by every sink so an MQTT subscriber
/// and a webhook receiver see the same documents. The router stores this form in the outbox, so a
/// sink sends the bytes as they are. Keys are sorted; times are epoch milliseconds.
///
/// - notification: `{"badge","chat","from","message_id","preview","user"}`
/// - live message: `{"body","chat","from","id","sent_at","to"?,"user"}`
/// - read receipt: `{"chat","read_at","reader","up_to","user"}`
/// - badge: `{"chats":{"c1":n,…},"unread":N}`
public enum OutputWireFormat {
    /// Encodes an output as its client-facing JSON document. Hand-written: it runs for every output
    /// inside the commit transaction.
    public static func encode(_ output: Output) -> [UInt8] {
        OutputDocument(output: output).encoded
    }

    /// The most bytes ``encode(_:into:)`` writes for `output`.
    public static func encodedSizeBound(_ output: Output) -> Int {
        OutputDocument(output: output).sizeBound
    }

    /// Writes `output`'s document into `buffer`, which holds at least ``encodedSizeBound(_:)`` bytes, for a
    /// store that puts it straight where the statement reads it instead of into an array of its own first.
    /// - Returns: the bytes written.
    public static func encode(_ output: Output, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        OutputDocument(output: output).write(into: buffer.bindMemory(to: UInt8.self))
    }

    /// Decodes a wire document back into an output (for tools and tests; sinks send bytes as they are).
    public static func decode(kind: OutputKind, recipient: UserID, payload: [UInt8]) throws -> Output {
        let decoder = JSONDecoder()
        let data = Data(payload)
        switch kind {
        case .notification: return .notification(try decoder.decode(InAppNotification.self, from: data))
        case .readReceipt: return .readReceipt(try decoder.decode(ReadReceipt.self, from: data))
        case .liveMessage:
            let wire = try decoder.decode(LiveMessageWire.self, from: data)
            return .liveMessage(LiveMessage(recipient: recipient, message: MessageReceived(
                chat: ChatID(wire.chat), id: MessageID(wire.id), sender: UserID(wire.from), recipients: wire.to?.map { UserID($0) },
                body: wire.body, sentAt: Timestamp(milliseconds: wire.sentAt))))
        case .badge:
            let wire = try decoder.decode(BadgeWire.self, from: data)
            return .badge(BadgeUpdate(recipient: recipient, unread: wire.unread, chats: wire.chats))
        }
    }

    private struct BadgeWire: Decodable {
        var unread: Int
        var chats: [ChatID: Int]
    }

    private struct LiveMessageWire: Decodable {
        var chat: String
        var id: String
        var from: String
        var to: [String]?
        var body: String
        var sentAt: Int64

        enum CodingKeys: String, CodingKey { case chat, id, from, to, body, sentAt = "sent_at" }
    }
}

extension OutputWireFormat {
    /// Appends `string` as a JSON string literal, escaped as every Herald JSON writer escapes.
    public static func appendJSONString(_ string: String, to bytes: inout [UInt8]) {
        JSONText.append(string: string, to: &bytes)
    }

    /// Appends an integer as JSON digits (concrete, so the digit loop is specialised for callers in other modules).
    public static func appendJSONInteger(_ value: Int64, to bytes: inout [UInt8]) {
        JSONText.append(integer: value, to: &bytes)
    }
}

/// An output's fields, in the wire format's order.
private struct OutputDocument: JSONObjectDocument {
    let output: Output

    func fields<Fields: JSONFields>(into writer: inout Fields) {
        switch output {
        case .notification(let value):
            writer.field("badge", value.badgeTotal)
            writer.field("chat", value.chat.rawValue)
            writer.field("from", value.sender.rawValue)
            writer.field("message_id", value.messageID.rawValue)
            writer.field("preview", value.preview)
            writer.field("user", value.recipient.rawValue)
        case .liveMessage(let value):
            writer.field("body", value.message.body)
            writer.field("chat", value.message.chat.rawValue)
            writer.field("from", value.message.sender.rawValue)
            writer.field("id", value.message.id.rawValue)
            writer.field("sent_at", value.message.sentAt.milliseconds)
            if let recipients = value.message.recipients { writer.field("to", recipients.map(\.rawValue)) }
            writer.field("user", value.recipient.rawValue)
        case .readReceipt(let value):
            writer.field("chat", value.chat.rawValue)
            writer.field("read_at", value.readAt.milliseconds)
            writer.field("reader", value.reader.rawValue)
            writer.field("up_to", value.upTo.rawValue)
            writer.field("user", value.recipient.rawValue)
        case .badge(let value):
            writer.field("chats", value.chats)
            writer.field("unread", value.unread)
        }
    }
}
