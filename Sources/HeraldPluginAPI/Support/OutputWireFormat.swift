import Foundation

/// The JSON that clients receive for each output kind, shared by every sink so an MQTT subscriber
/// and a webhook receiver see the same documents.
///
/// - notification: `{"user","chat","message_id","from","preview","badge"}`
/// - live message: `{"user","chat","id","from","to"?,"body","sent_at"}` (`sent_at` in epoch ms)
/// - read receipt: `{"user","chat","up_to","reader","read_at"}`
/// - badge: `{"unread":N,"chats":{"c1":n,…}}`
public enum OutputWireFormat {
    /// Encodes an output as its client-facing JSON document.
    public static func encode(_ output: Output) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data: Data?
        switch output {
        case .notification(let value): data = try? encoder.encode(value)
        case .readReceipt(let value): data = try? encoder.encode(value)
        case .liveMessage(let value): data = try? encoder.encode(LiveMessageWire(value))
        case .badge(let value): data = try? encoder.encode(BadgeWire(unread: value.unread, chats: value.chats))
        }
        return data.map { [UInt8]($0) } ?? []
    }

    private struct BadgeWire: Encodable {
        var unread: Int
        var chats: [String: Int]
    }

    private struct LiveMessageWire: Encodable {
        var user: String
        var chat: String
        var id: String
        var from: String
        var to: [String]?
        var body: String
        var sentAt: Int64

        init(_ live: LiveMessage) {
            user = live.recipient.rawValue
            chat = live.message.chat.rawValue
            id = live.message.id.rawValue
            from = live.message.sender.rawValue
            to = live.message.recipients?.map(\.rawValue)
            body = live.message.body
            sentAt = live.message.sentAt.milliseconds
        }

        enum CodingKeys: String, CodingKey { case user, chat, id, from, to, body, sentAt = "sent_at" }
    }
}
