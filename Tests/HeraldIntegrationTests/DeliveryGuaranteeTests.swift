import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Testing

/// Every message the broker delivered is stored exactly once in effect, whatever happens to the
/// gateway or the broker. These tests share the machine's two cores, so they run one at a time.
@Suite("Delivery guarantees under faults", .serialized)
struct DeliveryGuaranteeTests {
    /// Checks the invariants: the expected message count, nothing dead-lettered, every badge equals
    /// a recount from stored messages.
    static func expectConsistent(_ store: SQLiteChatStore, messages: Int) throws {
        #expect(try store.statistics().messages == messages)
        #expect(try store.statistics().deadLetters == 0)
        #expect(try store.statistics() == store.recountStatistics(), "the row counters match the tables")
        let mismatches = try store.unreadAgainstRecount().filter { $0.stored != $0.recounted }
        #expect(mismatches.isEmpty, "badges that differ from a recount: \(mismatches.prefix(5))")
    }

    @Test func redeliveredMessagesAreStoredOnceAndCountedOnce() async throws {
        let fixture = try await GatewayFixture()
        try await fixture.startHerald()
        let client = try await TestMQTTClient(port: fixture.broker.port, maxInflight: 1000)
        let total = 500
        for index in 0..<total {
            try client.publish("chats/c1/messages", messageJSON(id: "m\(index)", from: "alice", to: ["bob"], sentAt: 1_000 + Int64(index)))
            if index % 10 == 0 {  // 10% redelivered
                try client.publish("chats/c1/messages", messageJSON(id: "m\(index)", from: "alice", to: ["bob"], sentAt: 1_000 + Int64(index)))
            }
        }
        try await client.waitForAcknowledgements(total + total / 10)
        try await eventually("all \(total) stored") { try fixture.store().statistics().messages == total }
        try await eventually("the outbox drains") { try fixture.store().statistics().outbox == 0 }
        #expect(try fixture.store().badge(for: "bob").unread == total)
        try Self.expectConsistent(fixture.store(), messages: total)
        try await client.close()
    }

    @Test func killNineFiveTimesWhile100000MessagesStreamInLosesNothingAndDuplicatesNothing() async throws {
        let fixture = try await GatewayFixture()
        var herald = try await fixture.startHerald()
        let client = try await TestMQTTClient(port: fixture.broker.port, maxInflight: 1000)
        let total = 100_000, kills = 5
        let users = (0..<40).map { "u\($0)" }
        let publisher = Task {
            for index in 0..<total {
                let chat = index % 200
                try client.publish("chats/c\(chat)/messages",
                                   messageJSON(id: "m\(index)", from: users[chat % 40], to: [users[(chat + 1) % 40], users[(chat + 7) % 40]],
                                               sentAt: 1_000_000 + Int64(index)))
                if index % 1000 == 999 { await Task.yield() }
            }
        }
        var atCrashes: [Int] = []
        for kill in 1...kills {
            // Each kill lands further into the stream, while messages are still arriving.
            let mark = total * kill / (kills + 2)
            try await eventually("\(mark) stored before crash \(kill)", timeout: .seconds(120)) {
                try fixture.store().statistics().messages >= mark
            }
            try await herald.child.kill9()
            atCrashes.append(try fixture.store().statistics().messages)
            herald = try await fixture.startHerald()
        }
        try await publisher.value
        try await client.waitForAcknowledgements(total, timeout: .seconds(120))
        try await eventually("all \(total) stored after \(kills) crashes (stored at each: \(atCrashes))", timeout: .seconds(120)) {
            try fixture.store().statistics().messages == total
        }
        try Self.expectConsistent(fixture.store(), messages: total)
        #expect(atCrashes.allSatisfy { $0 < total }, "every crash should interrupt the stream: \(atCrashes)")
        try await eventually("every output delivered", timeout: .seconds(120)) { try fixture.store().statistics().outbox == 0 }
        try await client.close()
    }

    @Test func brokerRestartMidStreamReconnectsAndLosesNothing() async throws {
        let fixture = try await GatewayFixture()
        try await fixture.startHerald()
        let first = try await TestMQTTClient(port: fixture.broker.port, maxInflight: 1000)
        for index in 0..<1000 { try first.publish("chats/c\(index % 5)/messages", messageJSON(id: "a\(index)", from: "alice", to: ["bob"])) }
        try await first.waitForAcknowledgements(1000)
        try await first.close()
        try await fixture.broker.stop()
        try await fixture.broker.start()
        let second = try await TestMQTTClient(port: fixture.broker.port, maxInflight: 1000)
        for index in 0..<1000 { try second.publish("chats/c\(index % 5)/messages", messageJSON(id: "b\(index)", from: "alice", to: ["bob"])) }
        try await second.waitForAcknowledgements(1000)
        try await eventually("all 2000 stored after the broker restart", timeout: .seconds(60)) {
            try fixture.store().statistics().messages == 2000
        }
        #expect(fixture.logs.contains("MQTT connection failed; reconnecting."))
        try Self.expectConsistent(fixture.store(), messages: 2000)
        try await second.close()
    }

    /// A broker that stops answering (SIGSTOP, longer than the keepalive) but keeps its sockets open: Herald
    /// notices through the keepalive, reports not ready, reconnects once the broker answers again, and
    /// nothing acknowledged is lost or counted twice.
    @Test func aFrozenBrokerIsNoticedThroughTheKeepaliveAndNothingIsLost() async throws {
        let fixture = try await GatewayFixture()
        try fixture.configuration.yaml.replacingOccurrences(of: "keepalive: 10", with: "keepalive: 5")
            .write(toFile: fixture.configPath, atomically: true, encoding: .utf8)
        try await fixture.startHerald()
        let readyz = fixture.configuration.adminURL + "/readyz"
        try await eventually("ready") { (try? await fetch(readyz).status) == 200 }
        let first = try await TestMQTTClient(port: fixture.broker.port, maxInflight: 1000)
        for index in 0..<500 { try first.publish("chats/c\(index % 5)/messages", messageJSON(id: "a\(index)", from: "alice", to: ["bob"])) }
        try await first.waitForAcknowledgements(500)
        try await first.close()
        try await eventually("the first 500 stored") { try fixture.store().statistics().messages == 500 }

        let pid = try #require(fixture.broker.pid)
        kill(pid, SIGSTOP)
        do {
            try await eventually("not ready while the broker is frozen", timeout: .seconds(45)) { (try? await fetch(readyz).status) == 503 }
        } catch {
            kill(pid, SIGCONT)
            throw error
        }
        kill(pid, SIGCONT)
        try await eventually("ready again once the broker answers", timeout: .seconds(60)) { (try? await fetch(readyz).status) == 200 }

        let second = try await TestMQTTClient(port: fixture.broker.port, maxInflight: 1000)
        for index in 0..<500 { try second.publish("chats/c\(index % 5)/messages", messageJSON(id: "b\(index)", from: "alice", to: ["bob"])) }
        try await second.waitForAcknowledgements(500)
        try await eventually("all 1000 stored after the freeze") { try fixture.store().statistics().messages == 1000 }
        #expect(fixture.logs.contains("MQTT connection failed; reconnecting."), "\(fixture.logs)")
        try Self.expectConsistent(fixture.store(), messages: 1000)
        try await second.close()
    }

    @Test func sinkOutageGrowsTheOutboxThenDrainsInOrder() async throws {
        let sinkBroker = try await MosquittoBroker()
        let fixture = try await GatewayFixture(sinkBroker: sinkBroker)
        // A client with a persistent session on the sink's broker: it receives what is published while
        // it reconnects, so the test cannot miss early deliveries.
        let session = try await TestMQTTClient(port: sinkBroker.port, clientID: "bob-phone", cleanSession: false,
                                               subscriptions: ["users/bob/notifications"])
        try await session.close()
        try await fixture.startHerald()
        try await sinkBroker.stop()

        let client = try await TestMQTTClient(port: fixture.broker.port)
        let total = 50
        for index in 0..<total {
            try client.publish("chats/c1/messages", messageJSON(id: "m\(index)", from: "alice", to: ["bob"], sentAt: 1_000 + Int64(index)))
        }
        try await eventually("all stored while the sink is down") { try fixture.store().statistics().messages == total }
        // A notification per message, and a badge per commit that changed bob's count (at most one per message).
        let queued = try fixture.store().statistics().outbox
        #expect((total + 1...total * 2).contains(queued), "\(queued) outputs queued")
        #expect(try fixture.store().recountStatistics().outbox == queued)

        try await sinkBroker.start()
        try await eventually("the outbox drains after the sink is back", timeout: .seconds(60)) {
            try fixture.store().statistics().outbox == 0
        }
        let observer = try await TestMQTTClient(port: sinkBroker.port, clientID: "bob-phone", cleanSession: false)
        try await observer.waitForMessages("all notifications") { $0.count >= total }
        let order = observer.received.compactMap { message -> Int? in
            guard let range = message.text.range(of: #""message_id":"m"#) else { return nil }
            return Int(message.text[range.upperBound...].prefix { $0.isNumber })
        }
        #expect(order == Array(0..<total), "notifications arrive in commit order")
        #expect(try fixture.store().statistics() == fixture.store().recountStatistics(), "the row counters match the tables")
        try await observer.close()
        try await client.close()
    }
}
