import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Testing

@Suite("Bad input goes to the dead-letter queue and never stalls the pipeline")
struct BadInputTests {
    static let sourceExtra = """
            max_payload_bytes: 512
            subscriptions:
              - topic: chats/{chat}/messages
                event: message.received
              - topic: chats/{chat}/created
                event: chat.created
              - topic: users/{user}/read
                event: messages.read
              - topic: users/{user}/presence
                event: chat.presence
              - topic: users/{user}/events
                event: auto
        """

    @Test func everyKindOfBadInputIsDeadLetteredWithItsReasonAndTheNextGoodMessageFlows() async throws {
        let fixture = try await GatewayFixture(sourceExtra: Self.sourceExtra)
        try await fixture.startHerald()
        let client = try await TestMQTTClient(port: fixture.broker.port)
        let cases: [(topic: String, payload: [UInt8], reason: RejectionReason)] = [
            ("chats/c1/messages", Array("{\"id\":".utf8), .malformedJSON),
            ("chats/c1/messages", [0x7B, 0xFF, 0xFE, 0x7D], .invalidUTF8),
            ("chats/c1/messages", Array(#"{"id":"m1","from":"alice","sent_at":1}"#.utf8), .missingField),
            ("chats/c1/messages", Array(#"{"id":"m1","from":"alice","body":42,"sent_at":1}"#.utf8), .invalidField),
            ("users/bob/events", Array(#"{"type":"message.deleted","chat":"c1"}"#.utf8), .unknownEventKind),
            ("chats/c1/messages", Array(messageJSON(id: "big", from: "alice", body: String(repeating: "x", count: 600)).utf8), .oversize),
            ("users/bob/read", Array(#"{"chat":"c1","up_to":"m1","user":"mallory"}"#.utf8), .identityMismatch),
            ("users/bob/presence", Array(#"{"chat":"c1","state":"open","user":"alice"}"#.utf8), .identityMismatch),
        ]
        for bad in cases { try client.publish(bad.topic, bytes: bad.payload) }
        try client.publish("chats/c1/messages", messageJSON(id: "good", from: "alice", to: ["bob"]))
        try await client.waitForAcknowledgements(cases.count + 1)

        try await eventually("the good message after the bad ones") { try fixture.store().statistics().messages == 1 }
        let letters = try fixture.store().deadLetters(limit: 100, includeReplayed: false)
        #expect(letters.map(\.rejection.reason) == cases.map(\.reason))
        #expect(letters.map(\.raw) == cases.map(\.payload))
        #expect(letters.allSatisfy { $0.provenance.adapter == "broker" && !$0.rejection.detail.isEmpty })
        #expect(try fixture.store().badge(for: "bob").unread == 1)

        let list = try await fixture.cli(["dlq", "list"])
        #expect(list.status == 0)
        #expect(list.output.contains("identity_mismatch") && list.output.contains("oversize"))
        try await client.close()
    }

    @Test func aReadFromOutsideTheDeclaredMembersIsDeadLettered() async throws {
        let fixture = try await GatewayFixture(sourceExtra: Self.sourceExtra)
        let herald = try await fixture.startHerald()
        let client = try await TestMQTTClient(port: fixture.broker.port)
        let strangersRead = #"{"chat":"c1","up_to":"m1"}"#
        try client.publish("chats/c1/created", #"{"members":["alice","bob"]}"#)
        try client.publish("chats/c1/messages", messageJSON(id: "m1", from: "alice", to: ["bob"]))
        // mallory may publish on her own topic (the ACL allows it), but she is not in c1.
        try client.publish("users/mallory/read", strangersRead)
        try client.publish("users/bob/read", strangersRead)
        try await client.waitForAcknowledgements(4)

        try await eventually("bob's read applied") { try fixture.store().badge(for: "bob").unread == 0 && fixture.store().statistics().messages == 1 }
        try await eventually("mallory's read dead-lettered") { try !fixture.store().deadLetters(limit: 10, includeReplayed: false).isEmpty }
        let letters = try fixture.store().deadLetters(limit: 10, includeReplayed: false)
        #expect(letters.map(\.rejection.reason) == [.notAMember])
        // Accepted inputs keep no bytes; the refused event is kept in its self-describing form.
        #expect(letters.first.map { String(decoding: $0.raw, as: UTF8.self) }
                == #"{"type":"messages.read","chat":"c1","user":"mallory","up_to":"m1","read_at":\#(letters[0].provenance.receivedAt.milliseconds)}"#)
        #expect(letters.first?.provenance.origin == "users/mallory/read")
        let list = try await fixture.cli(["dlq", "list"])
        #expect(list.output.contains("not_a_member") && list.output.contains("mallory is not a member of chat c1"))

        // Replayed while mallory is still outside, it stays a dead letter; once she is added, it applies.
        herald.child.signal(SIGTERM)
        _ = try await herald.child.waitForExit()
        let refusedAgain = try await fixture.cli(["dlq", "replay"])
        #expect(refusedAgain.output.contains("Replayed 0; still failing 1"), "\(refusedAgain.output)")
        #expect(try fixture.store().deadLetters(limit: 10, includeReplayed: false).count == 1)
        let restarted = try await fixture.startHerald()
        try client.publish("chats/c1/created", #"{"members":["mallory"]}"#)
        try await eventually("mallory added") { try fixture.store().badge(for: "mallory").unread == 1 }
        restarted.child.signal(SIGTERM)
        _ = try await restarted.child.waitForExit()
        let replayed = try await fixture.cli(["dlq", "replay"])
        #expect(replayed.output.contains("Replayed 1; still failing 0"), "\(replayed.output)")
        #expect(try fixture.store().badge(for: "mallory").unread == 0)
        try await client.close()
    }

    @Test func hostilePayloadsAreRejectedWithAReasonAndTheStreamGoesOn() async throws {
        let limit = 1 << 20
        let fixture = try await GatewayFixture(sourceExtra: "    max_payload_bytes: \(limit)")
        try await fixture.startHerald()
        let client = try await TestMQTTClient(port: fixture.broker.port)
        let thousandDigits = String(repeating: "9", count: 1000)
        let deep = #"{"id":"# + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}"
        let exact = messageJSON(id: "exact", from: "alice", to: ["bob"], body: "")
        let padded = messageJSON(id: "exact", from: "alice", to: ["bob"], body: String(repeating: "z", count: limit - exact.utf8.count))
        let loneSurrogate = #"{"id":"m9","from":"alice","body":"\ud800","sent_at":1}"#
        let cases: [(payload: [UInt8], reason: RejectionReason?)] = [
            (Array(deep.utf8), .malformedJSON),
            // A thousand digits is beyond any double: the parser refuses the number as out of range.
            (Array(#"{"id":"m1","from":"alice","body":"x","sent_at":\#(thousandDigits)}"#.utf8), .malformedJSON),
            (Array(#"{"id":\#(thousandDigits),"from":"alice","body":"x","sent_at":1}"#.utf8), .malformedJSON),
            (Array(#"{"id":"m2","from":"alice","body":"x","sent_at":1\#(thousandDigits).5}"#.utf8), .malformedJSON),
            (Array(#"{"id":"m3","from":"alice","body":"x","sent_at":99999999999999999999}"#.utf8), .invalidField),
            (Array(loneSurrogate.utf8), .malformedJSON),
            (Array(padded.utf8), nil),
            (Array(padded.utf8) + [0x20], .oversize),
        ]
        #expect(padded.utf8.count == limit)
        for bad in cases { try client.publish("chats/c1/messages", bytes: bad.payload) }
        try client.publish("chats/c1/messages", messageJSON(id: "good", from: "alice", to: ["bob"]))
        try await client.waitForAcknowledgements(cases.count + 1)
        try await eventually("the good message after the hostile ones") {
            try fixture.store().containsMessage(chat: ChatID("c1"), id: MessageID("good"))
        }
        let letters = try fixture.store().deadLetters(limit: 100, includeReplayed: false)
        #expect(letters.map(\.rejection.reason) == cases.compactMap(\.reason), "\(letters.map { "\($0.rejection)" })")
        #expect(try fixture.store().containsMessage(chat: ChatID("c1"), id: MessageID("exact")), "a payload exactly at the limit is read")
        #expect(fixture.herald?.child.isRunning == true)
        try await client.close()
    }

    @Test func replayAppliesDeadLettersThatTheFixedConfigAccepts() async throws {
        let fixture = try await GatewayFixture(sourceExtra: Self.sourceExtra)
        let herald = try await fixture.startHerald()
        let client = try await TestMQTTClient(port: fixture.broker.port)
        try client.publish("chats/c1/messages", messageJSON(id: "long", from: "alice", to: ["bob"], body: String(repeating: "y", count: 600)))
        try client.publish("chats/c1/messages", "garbage")
        try await eventually("two dead letters") { try fixture.store().deadLetters(limit: 10, includeReplayed: false).count == 2 }
        herald.child.signal(SIGTERM)
        _ = try await herald.child.waitForExit()

        // The operator raises the limit; the oversize message now normalises, the garbage still fails.
        try fixture.configuration.yaml.replacingOccurrences(of: "max_payload_bytes: 512", with: "max_payload_bytes: 4096")
            .write(toFile: fixture.configPath, atomically: true, encoding: .utf8)
        let first = try await fixture.cli(["dlq", "replay"])
        #expect(first.status == 0)
        #expect(first.output.contains("Replayed 1; still failing 1"), "\(first.output)")
        #expect(try fixture.store().statistics().messages == 1)
        #expect(try fixture.store().badge(for: "bob").unread == 1)

        let second = try await fixture.cli(["dlq", "replay"])
        #expect(second.output.contains("Replayed 0; still failing 1"))
        #expect(try fixture.store().badge(for: "bob").unread == 1)
        // The replayed letter is no longer open; replaying it again does not count it twice.
        #expect(try fixture.store().statistics() == StoreStatistics(messages: 1, deadLetters: 1, outbox: fixture.store().recountStatistics().outbox))
        #expect(try fixture.store().statistics() == fixture.store().recountStatistics())
        try await client.close()
    }
}
