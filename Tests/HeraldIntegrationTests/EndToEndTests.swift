import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Testing

@Suite("End to end through a real broker and the herald binary")
struct EndToEndTests {
    @Test func quickStartFlowDeliversNotificationReceiptAndBadges() async throws {
        let fixture = try await GatewayFixture()
        try await fixture.startHerald()
        let observer = try await TestMQTTClient(port: fixture.broker.port, subscriptions: ["users/#"])
        let client = try await TestMQTTClient(port: fixture.broker.port)

        try client.publish("chats/c1/messages", messageJSON(id: "m1", from: "alice", to: ["bob"], body: "hi bob"))
        try await observer.waitForMessages("bob's notification") { $0.contains { $0.topic == "users/bob/notifications" } }
        try client.publish("users/bob/read", #"{"chat":"c1","up_to":"m1"}"#)
        try await observer.waitForMessages("alice's receipt and bob's zero badge") { received in
            received.contains { $0.topic == "users/alice/receipts" } && received.contains { $0.topic == "users/bob/badge" && $0.text.contains("\"unread\":0") }
        }

        let notification = try #require(observer.received.first { $0.topic == "users/bob/notifications" })
        let fields = try JSONSerialization.jsonObject(with: Data(notification.text.utf8)) as? [String: Any]
        #expect(fields?["from"] as? String == "alice")
        #expect(fields?["preview"] as? String == "hi bob")
        #expect(fields?["badge"] as? Int == 1)
        let receipt = try #require(observer.received.first { $0.topic == "users/alice/receipts" })
        #expect(receipt.text.contains("\"reader\":\"bob\"") && receipt.text.contains("\"up_to\":\"m1\""))
        let badges = observer.received.filter { $0.topic == "users/bob/badge" }.map(\.text)
        #expect(badges == [#"{"chats":{"c1":1},"unread":1}"#, #"{"chats":{},"unread":0}"#])

        // The badge is retained: a client that subscribes now gets its current count at once.
        let late = try await TestMQTTClient(port: fixture.broker.port, subscriptions: ["users/bob/badge"])
        try await late.waitForMessages("retained badge") { $0.contains { $0.retained && $0.text == #"{"chats":{},"unread":0}"# } }

        let cli = try await fixture.cli(["badge", "bob"])
        #expect(cli.status == 0)
        #expect(cli.output.contains(#"{"chats":{},"unread":0}"#))
        for peer in [observer, client, late] { try await peer.close() }
    }

    @Test func presenceTurnsNotificationsIntoLiveMessages() async throws {
        let fixture = try await GatewayFixture()
        try await fixture.startHerald()
        let observer = try await TestMQTTClient(port: fixture.broker.port, subscriptions: ["users/bob/#"])
        let client = try await TestMQTTClient(port: fixture.broker.port)
        try client.publish("users/bob/presence", #"{"chat":"c1","state":"open"}"#)
        try client.publish("chats/c1/messages", messageJSON(id: "m1", from: "alice", to: ["bob"]))
        try await observer.waitForMessages("live message") { $0.contains { $0.topic == "users/bob/messages" } }
        #expect(!observer.received.contains { $0.topic == "users/bob/notifications" })
        let live = try #require(observer.received.first { $0.topic == "users/bob/messages" })
        #expect(live.text.contains("\"id\":\"m1\"") && live.text.contains("\"from\":\"alice\""))

        try client.publish("users/bob/presence", #"{"chat":"c1","state":"closed"}"#)
        try client.publish("chats/c1/messages", messageJSON(id: "m2", from: "alice", to: ["bob"], sentAt: 1_763_800_001_000))
        try await observer.waitForMessages("notification after close") { $0.contains { $0.topic == "users/bob/notifications" } }
        try await observer.close()
        try await client.close()
    }

    @Test func sigtermDrainsAndExitsZeroWithinTenSeconds() async throws {
        let fixture = try await GatewayFixture()
        let herald = try await fixture.startHerald()
        let client = try await TestMQTTClient(port: fixture.broker.port, maxInflight: 1000)
        for index in 0..<2000 {
            try client.publish("chats/c\(index % 10)/messages", messageJSON(id: "m\(index)", from: "alice", to: ["bob"]))
        }
        try await client.waitForAcknowledgements(2000)
        try await eventually("some messages stored") { try fixture.store().statistics().messages > 0 }
        let started = ContinuousClock.now
        herald.child.signal(SIGTERM)
        let status = try await herald.child.waitForExit(timeout: .seconds(30))
        let elapsed = ContinuousClock.now - started
        #expect(status == 0, "exit status; log:\n\(fixture.logs)")
        #expect(elapsed < .seconds(10), "the shutdown took \(elapsed); log:\n\(fixture.logs)")
        #expect(fixture.logs.contains("Herald stopped."))

        // Whatever was acknowledged before the stop is stored; the rest is still queued for the session.
        try await fixture.startHerald()
        try await eventually("all 2000 stored after restart") { try fixture.store().statistics().messages == 2000 }
        try await client.close()
    }
}
