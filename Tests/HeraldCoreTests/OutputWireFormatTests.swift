import Foundation
import HeraldPluginAPI
import Testing

@Suite("Output wire format")
struct OutputWireFormatTests {
    /// Text that needs every kind of JSON escape, next to text that needs none.
    static let awkwardTexts = [
        "plain", "", "quote \" backslash \\ slash /", "lines\nand\rtabs\t", "bell \u{07} nul \u{00} unit \u{1F}",
        "héllo wörld — 日本語 🎉", "\"", "\\", "ends with escape\n",
    ]

    @Test("strings are escaped so any JSON parser reads back the same text", arguments: awkwardTexts)
    func stringsRoundTrip(text: String) throws {
        let output = Output.liveMessage(LiveMessage(recipient: "bob", message: MessageReceived(
            chat: ChatID(text.isEmpty ? "c" : "c1"), id: "m1", sender: "alice", recipients: [UserID("bob")], body: text,
            sentAt: Timestamp(milliseconds: 1_700_000_000_123))))
        let bytes = OutputWireFormat.encode(output)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(parsed["body"] as? String == text)
        #expect(parsed["sent_at"] as? Int == 1_700_000_000_123)
        #expect(try OutputWireFormat.decode(kind: .liveMessage, recipient: "bob", payload: bytes) == output)
    }

    @Test("integers are written in decimal, including zero and negatives")
    func integers() throws {
        for unread in [0, 7, 10, 1234567, -1, -90] {
            let badge = Output.badge(BadgeUpdate(recipient: "bob", unread: unread, chats: ["c1": unread, "c2": 0]))
            let bytes = OutputWireFormat.encode(badge)
            #expect(String(decoding: bytes, as: UTF8.self) == #"{"chats":{"c1":\#(unread),"c2":0},"unread":\#(unread)}"#)
            #expect(try OutputWireFormat.decode(kind: .badge, recipient: "bob", payload: bytes) == badge)
        }
    }

    /// Every kind of output carrying `text` wherever text goes.
    static func outputs(carrying text: String) -> [Output] {
        let user = UserID(text.isEmpty ? "u" : text)
        return [
            .notification(InAppNotification(recipient: user, chat: ChatID(text + "c"), messageID: MessageID(text + "m"), sender: "alice",
                                            preview: text, badgeTotal: -1234567)),
            .liveMessage(LiveMessage(recipient: user, message: MessageReceived(
                chat: "c1", id: MessageID(text + "m"), sender: UserID(text + "s"), recipients: [user, UserID(text + "2")], body: text,
                sentAt: Timestamp(milliseconds: Int64.max)))),
            .readReceipt(ReadReceipt(recipient: user, chat: ChatID(text + "c"), upTo: MessageID(text + "m"), reader: UserID(text + "r"),
                                     readAt: Timestamp(milliseconds: Int64.min))),
            .badge(BadgeUpdate(recipient: user, unread: Int.min, chats: [ChatID(text): Int.max, ChatID(text + "x"): 0])),
        ]
    }

    @Test("a store's buffer of the measured size takes the same document as the array", arguments: awkwardTexts)
    func writingIntoMeasuredSpace(text: String) throws {
        for output in Self.outputs(carrying: text) {
            let bound = OutputWireFormat.encodedSizeBound(output)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bound, alignment: 1)
            defer { buffer.deallocate() }
            let written = OutputWireFormat.encode(output, into: buffer)
            #expect(written <= bound)
            #expect(Array(buffer[..<written]) == OutputWireFormat.encode(output))
            #expect(try JSONSerialization.jsonObject(with: Data(buffer[..<written])) is [String: Any], "\(output)")
        }
    }
}
