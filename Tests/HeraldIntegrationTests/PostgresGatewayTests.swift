import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldPostgres
import HeraldTestKit
import Logging
import Testing

@Suite("The herald binary on a PostgreSQL store")
struct PostgresGatewayTests {
    @Test func quickStartFlowOnPostgreSQL() async throws {
        let cluster = try await PostgresCluster.shared()
        let url = try cluster.createDatabase()
        let fixture = try await GatewayFixture(storeURL: url)
        let check = try await fixture.cli(["check"])
        #expect(check.status == 0 && check.output.contains("store:   PostgreSQL \(url)?sslmode=disable"), "\(check.output)")

        try await fixture.startHerald()
        let observer = try await TestMQTTClient(port: fixture.broker.port, subscriptions: ["users/#"])
        let client = try await TestMQTTClient(port: fixture.broker.port)
        try client.publish("chats/c1/messages", messageJSON(id: "m1", from: "alice", to: ["bob"], body: "hi bob"))
        try await observer.waitForMessages("bob's notification") { $0.contains { $0.topic == "users/bob/notifications" } }
        try client.publish("users/bob/read", #"{"chat":"c1","up_to":"m1"}"#)
        try await observer.waitForMessages("alice's receipt and bob's zero badge") { received in
            received.contains { $0.topic == "users/alice/receipts" } && received.contains { $0.topic == "users/bob/badge" && $0.text.contains("\"unread\":0") }
        }
        #expect(observer.received.filter { $0.topic == "users/bob/badge" }.map(\.text)
                == [#"{"chats":{"c1":1},"unread":1}"#, #"{"chats":{},"unread":0}"#])
        #expect(fixture.logs.contains(url), "the start-up log names the store")

        let store = try PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        #expect(try store.statistics().messages == 1)
        #expect(try store.unreadAgainstRecount().allSatisfy { $0.stored == $0.recounted })
        let badge = try await fixture.cli(["badge", "bob"])
        #expect(badge.status == 0 && badge.output.contains(#"{"chats":{},"unread":0}"#), "\(badge.output)")
        for peer in [observer, client] { try await peer.close() }
    }

    @Test func anUnreachableServerStopsStartWithOneClearLine() async throws {
        let port = try Loopback.freePort()
        let fixture = try await GatewayFixture(storeURL: "postgres://herald@127.0.0.1:\(port)/chats")
        let run = try await fixture.cli(["run"])
        #expect(run.status != 0)
        #expect(run.output.contains("cannot connect to PostgreSQL at postgres://herald@127.0.0.1:\(port)/chats"), "\(run.output)")
    }
}
