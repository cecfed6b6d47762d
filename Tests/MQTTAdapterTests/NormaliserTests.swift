import Foundation
import HeraldCore
import HeraldPluginAPI
import MQTTAdapter
import Testing

@Suite("MQTT payload normalisation")
struct NormaliserTests {
    static let registry = AdapterRegistry().with(source: MQTTAdapters.source).with(sink: MQTTAdapters.sink)

    /// The normaliser of the sample config's source.
    static func normaliser() throws -> any ReplayNormaliser {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("plugins/mqtt/sample.yaml").path
        let configuration = try ConfigurationLoader(registry: registry, environment: [:]).load(path: path)
        return try configuration.sources[0].settings.makeReplayNormaliser(name: "broker")
    }

    static func outcome(_ topic: String, _ payload: String) throws -> SourceRecord.Outcome {
        let provenance = Provenance(adapter: "broker", origin: topic, rawSize: payload.utf8.count, receivedAt: Timestamp(milliseconds: 42))
        return try normaliser().normalise(Array(payload.utf8), provenance: provenance).outcome
    }

    @Test func defaultShapesBecomeEvents() throws {
        #expect(try Self.outcome("chats/c1/messages", #"{"id":"m1","from":"alice","to":["bob"],"body":"hi","sent_at":1763800000}"#)
            == .event(.messageReceived(MessageReceived(chat: "c1", id: "m1", sender: "alice", recipients: ["bob"], body: "hi",
                                                       sentAt: Timestamp(milliseconds: 1_763_800_000_000)))))
        #expect(try Self.outcome("chats/c1/created", #"{"members":["alice","bob"]}"#)
            == .event(.chatCreated(ChatCreated(chat: "c1", members: ["alice", "bob"]))))
        #expect(try Self.outcome("users/bob/read", #"{"chat":"c1","up_to":"m1"}"#)
            == .event(.messagesRead(MessagesRead(reader: "bob", chat: "c1", upTo: "m1", readAt: Timestamp(milliseconds: 42)))))
        #expect(try Self.outcome("users/bob/presence", #"{"chat":"c1","state":"open"}"#) == .event(.chatOpened(ChatFocus(user: "bob", chat: "c1"))))
        #expect(try Self.outcome("users/bob/presence", #"{"chat":"c1","state":"closed"}"#) == .event(.chatClosed(ChatFocus(user: "bob", chat: "c1"))))
    }

    @Test func fieldMappingReadsOtherShapesWithRFC3339Times() throws {
        let payload = #"{"post":{"uuid":"p-7","author":{"id":"carol"},"text":"moved","created_at":"2025-11-22T10:00:00.250Z"}}"#
        #expect(try Self.outcome("legacy/rooms/r1/posts", payload)
            == .event(.messageReceived(MessageReceived(chat: "r1", id: "p-7", sender: "carol", body: "moved",
                                                       sentAt: Timestamp(milliseconds: 1_763_805_600_250)))))
    }

    @Test func pointersResolveEscapesArraysAndTheWholeDocument() throws {
        guard case .success(let document) = JSONValue.parse(Array(#"{"a/b":{"m~n":[10,{"x":"y"}]},"":1}"#.utf8)) else {
            Issue.record("the document should parse")
            return
        }
        #expect(document.value(at: JSONPointer("/a~1b/m~0n/1/x")) == .string("y"))
        #expect(document.value(at: "/a~1b/m~0n/0") == .number(10))
        #expect(document.value(at: "/") == .number(1))
        #expect(document.value(at: "") == document)
        #expect(document.value(at: "/a~1b/m~0n/2") == nil)
        #expect(document.value(at: "a~1b") == nil)  // not a pointer

        // A decoder whose mapping changes reads the new pointers.
        var decoder = EventPayloadDecoder()
        decoder.mapping.id = "/meta/id"
        let decoded = decoder.decode(Array(#"{"meta":{"id":"m9"},"id":"m1","from":"a","body":"x","sent_at":1}"#.utf8), as: .messageReceived,
                                     bindings: PayloadBindings(chat: "c1"), receivedAt: Timestamp(milliseconds: 1))
        guard case .success(.messageReceived(let message)) = decoded else {
            Issue.record("expected a message, got \(decoded)")
            return
        }
        #expect(message.id == "m9")
    }

    @Test(arguments: [
        ("chats/c1/messages", "[1,2]", RejectionReason.malformedJSON),
        ("chats/c1/messages", #"{"id":"m1","from":"a/b","body":"x","sent_at":1}"#, .invalidField),
        ("chats/c1/messages", #"{"id":"m1","from":"a","body":"x","sent_at":"yesterday"}"#, .invalidField),
        // Found by fuzzing: an RFC 3339 time before 1970 got through where the same number did not, and a
        // number beyond any double read as infinity.
        ("chats/c1/messages", #"{"id":"m1","from":"a","body":"x","sent_at":"1012-11-22T10:00:00Z"}"#, .invalidField),
        ("chats/c1/messages", #"{"id":"m1","from":"a","body":"x","sent_at":1e400}"#, .malformedJSON),
        ("chats/c1/messages", #"{"id":"m1","chat":"c2","from":"a","body":"x","sent_at":1}"#, .identityMismatch),
        // The topic's chat or user spelled otherwise (a precomposed é against e + a combining accent) is someone else.
        ("chats/caf\u{E9}/messages", #"{"id":"m1","chat":"cafe\u0301","from":"a","body":"x","sent_at":1}"#, .identityMismatch),
        ("users/r\u{E9}my/read", #"{"chat":"c1","up_to":"m1","user":"re\u0301my"}"#, .identityMismatch),
        ("users/bob/read", #"{"chat":"c1"}"#, .missingField),
        ("users/bob/presence", #"{"chat":"c1","state":"away"}"#, .invalidField),
        ("chats/c1/created", #"{"members":[]}"#, .missingField),
        ("nowhere/x", "{}", .unknownOrigin),
    ])
    func badPayloadsAreRejectedWithTheirReason(topic: String, payload: String, reason: RejectionReason) throws {
        guard case .rejected(let rejection) = try Self.outcome(topic, payload) else {
            Issue.record("expected a rejection")
            return
        }
        #expect(rejection.reason == reason)
    }
}
