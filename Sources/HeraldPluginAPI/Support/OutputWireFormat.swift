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
        var writer = JSONObjectWriter()
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
        return writer.finish()
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
        var chats: [String: Int]
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

/// Writes one flat JSON object, field by field, in the order given.
struct JSONObjectWriter {
    private var bytes: [UInt8]
    private var first = true

    init() {
        bytes = []
        bytes.reserveCapacity(256)
        bytes.append(UInt8(ascii: "{"))
    }

    /// The comma before every field but the first.
    private mutating func separate() {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
    }

    /// A field name written in code: its bytes are copied as they are (names need no escaping).
    private mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func field(_ name: StaticString, _ value: String) {
        key(name)
        Self.append(string: value, to: &bytes)
    }

    mutating func field<I: BinaryInteger>(_ name: StaticString, _ value: I) {
        key(name)
        Self.append(integer: value, to: &bytes)
    }

    /// A field whose name comes from data (a chat id), escaped like any value.
    mutating func field<I: BinaryInteger>(key name: String, _ value: I) {
        separate()
        Self.append(string: name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        Self.append(integer: value, to: &bytes)
    }

    mutating func field(_ name: StaticString, _ values: [String]) {
        key(name)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            Self.append(string: value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    mutating func field(_ name: StaticString, _ counts: [String: Int]) {
        key(name)
        var nested = JSONObjectWriter()
        for (chat, count) in counts.sorted(by: { $0.key < $1.key }) { nested.field(key: chat, count) }
        bytes.append(contentsOf: nested.finish())
    }

    mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// Appends `string` as a JSON string: runs that need no escaping are copied whole.
    static func append(string: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            var runStart = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                appendEscaped(byte, to: &bytes)
                runStart = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static func appendEscaped(_ byte: UInt8, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            let hex: StaticString = "0123456789abcdef"
            hex.withUTF8Buffer { digits in
                bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
            }
        }
    }

    /// Appends an integer's decimal digits without building a `String`.
    static func append(integer value: some BinaryInteger, to bytes: inout [UInt8]) {
        guard value != 0 else { return bytes.append(UInt8(ascii: "0")) }
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        let start = bytes.count
        var remaining = value.magnitude
        while remaining > 0 {
            let (quotient, digit) = remaining.quotientAndRemainder(dividingBy: 10)
            bytes.append(UInt8(ascii: "0") + UInt8(digit))
            remaining = quotient
        }
        bytes[start...].reverse()
    }
}

extension OutputWireFormat {
    /// Appends `string` as a JSON string literal, escaped as every Herald JSON writer escapes.
    public static func appendJSONString(_ string: String, to bytes: inout [UInt8]) {
        JSONObjectWriter.append(string: string, to: &bytes)
    }

    /// Appends an integer as JSON digits (concrete, so the digit loop is specialised for callers in other modules).
    public static func appendJSONInteger(_ value: Int64, to bytes: inout [UInt8]) {
        JSONObjectWriter.append(integer: value, to: &bytes)
    }
}
