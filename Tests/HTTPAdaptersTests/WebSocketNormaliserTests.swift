import HeraldCore
import HeraldPluginAPI
import Testing
@testable import WebSocketAdapter

@Suite("WebSocket messages and the reader/committer queue")
struct WebSocketNormaliserTests {
    static let normaliser = WebSocketNormaliser(
        adapter: "stream", origin: "wss://h/e", kind: .fromPayload, idPointer: "/event_id",
        appPong: AppPingOptions.PongMatch(pointer: "/type", value: "pong"), decoder: EventPayloadDecoder(maxPayloadBytes: 256))

    static func read(_ text: String) -> WebSocketNormaliser.Reading {
        normaliser.read(Array(text.utf8), text: true, receivedAt: Timestamp(milliseconds: 5))
    }

    @Test func eventsCarryTheirIdForResuming() {
        guard case .record(let record, let id) = Self.read(#"{"event_id":41,"type":"chat.opened","chat":"c1","user":"bob"}"#) else {
            Issue.record("not a record"); return
        }
        #expect(id == "41")
        #expect(record.outcome == .event(.chatOpened(ChatFocus(user: UserID("bob"), chat: ChatID("c1")))))
    }

    @Test func badMessagesAreRejectedButKeepTheirId() {
        guard case .record(let record, let id) = Self.read(#"{"event_id":"e9","type":"message.received"}"#),
              case .rejected(let rejection) = record.outcome else { Issue.record("accepted"); return }
        #expect(id == "e9", "a rejected message still moves the resume position")
        #expect(rejection.reason == .missingField)
        guard case .record(let bad, nil) = normaliser(bytes: [0x7B, 0xFF, 0x7D]), case .rejected(let utf8) = bad.outcome else {
            Issue.record("accepted"); return
        }
        #expect(utf8.reason == .invalidUTF8)
    }

    /// Fuzzing inputs (through the exec plugin protocol, which shares the feed decoder): a feed's user gets
    /// the identifier checks, and invalid UTF-8 inside a JSON string is refused, never replaced.
    @Test func aFeedsUserIsCheckedLikeEveryIdentifierAndStringsMustBeUTF8() {
        let long = String(repeating: "u", count: 300)
        let roomy = WebSocketNormaliser(adapter: "stream", origin: "wss://h/e", kind: .fromPayload, idPointer: "/event_id", appPong: nil,
                                        decoder: EventPayloadDecoder(maxPayloadBytes: 4096))
        let frame = Array(#"{"type":"chat.opened","chat":"c1","user":"\#(long)"}"#.utf8)
        guard case .record(let tooLong, _) = roomy.read(frame, text: true, receivedAt: Timestamp(milliseconds: 5)),
              case .rejected(let rejection) = tooLong.outcome else { Issue.record("a 300-byte user got through"); return }
        #expect(rejection.reason == .invalidField && rejection.detail.contains("user"))
        let invalid = Array(#"{"type":"chat.opened","chat":"c1","user":"b"#.utf8) + [0xFF] + Array(#"b"}"#.utf8)
        switch JSONValue.parse(invalid) {
        case .success: Issue.record("invalid UTF-8 inside a string parsed")
        case .failure(let error): #expect(error.message == "invalid UTF-8 in a string")
        }
    }

    func normaliser(bytes: [UInt8]) -> WebSocketNormaliser.Reading {
        Self.normaliser.read(bytes, text: true, receivedAt: Timestamp(milliseconds: 5))
    }

    @Test func applicationPongsAreNotEvents() {
        guard case .pong = Self.read(#"{"type":"pong"}"#) else { Issue.record("a pong became a record"); return }
    }

    @Test func theQueueHandsOverInOrderAndDrainsAfterFinish() async {
        let queue = BatchQueue<Int>(capacity: 4)
        async let produced: Void = {
            for value in 0..<100 { await queue.push(value) }
            queue.finish()
        }()
        var seen: [Int] = []
        while let batch = await queue.take(upTo: 3) {
            #expect(batch.count <= 3)
            seen += batch
        }
        await produced
        #expect(seen == Array(0..<100))
    }
}
