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
        let url = try await cluster.createDatabase()
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

        let store = try await offCooperativePool { try PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }) }
        #expect(try store.statistics().messages == 1)
        #expect(try store.unreadAgainstRecount().allSatisfy { $0.stored == $0.recounted })
        let badge = try await fixture.cli(["badge", "bob"])
        #expect(badge.status == 0 && badge.output.contains(#"{"chats":{},"unread":0}"#), "\(badge.output)")
        // Delivered outputs leave the outbox at the dispatcher's next purge, a moment after delivery.
        try await eventually("the delivered outputs to leave the outbox") { try store.statistics().outbox == 0 }
        let status = try await fixture.cli(["status"])
        #expect(status.status == 0 && status.output.contains("Store        1 messages, outbox 0, dead letters 0"), "\(status.output)")
        // The fixture's `durability: normal` turns synchronous_commit off in Herald's sessions.
        #expect(status.output.contains("  at         \(url)?sslmode=disable, durability normal"), "\(status.output)")
        for peer in [observer, client] { try await peer.close() }
    }

    /// The database goes away under load and comes back: nothing is acknowledged meanwhile, readiness
    /// says why, and Herald resumes by itself with every message stored once and every notification sent.
    @Test func aDatabaseOutageIsWaitedOutWithNothingLostOrDoubled() async throws {
        let cluster = try await PostgresCluster()  // its own: this test stops it
        let url = try await cluster.createDatabase()
        let fixture = try await GatewayFixture(storeURL: url)
        try await fixture.startHerald()
        let ready = fixture.configuration.adminURL + "/readyz"
        try await eventually("ready") { (try? await fetch(ready).status) == 200 }
        let observer = try await TestMQTTClient(port: fixture.broker.port, subscriptions: ["users/bob/notifications"])
        let client = try await TestMQTTClient(port: fixture.broker.port)
        func publish(_ range: Range<Int>) throws {
            for index in range {
                try client.publish("chats/c\(index % 5)/messages", messageJSON(id: "m\(index)", from: "alice", to: ["bob"], sentAt: 1_763_800_000_000 + Int64(index)))
            }
        }
        let store = try await offCooperativePool { try PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }) }
        try publish(0..<50)
        try await eventually("the first 50 stored") { try store.statistics().messages == 50 }

        try await cluster.stop()
        try publish(50..<100)
        try await client.waitForAcknowledgements(100)  // the broker holds them for Herald
        try await eventually("not ready, naming the store", timeout: .seconds(30)) {
            guard let response = try? await fetch(ready) else { return false }
            return response.status == 503 && response.body.contains("store not writable") && response.body.contains("cannot connect to PostgreSQL")
        }
        // Either the source tried to commit and said so, or it stopped first: the MQTT source runs under a
        // lease in the store, and a lease that cannot be renewed stops it (whichever comes first depends on
        // when the messages reach it). Both leave the messages unacknowledged with the broker.
        try await eventually("a failed commit, or the source stopping, to be logged") {
            fixture.logs.contains("Commit failed; nothing of it was acknowledged") || fixture.logs.contains("The source's lease is lost")
        }

        try await cluster.start()
        try await eventually("all 100 stored after the outage", timeout: .seconds(90)) { (try? store.statistics().messages) == 100 }
        try await eventually("ready again", timeout: .seconds(30)) { (try? await fetch(ready).status) == 200 }
        #expect(try store.badge(for: "bob").unread == 100, "every message counted once")
        #expect(try store.unreadAgainstRecount().allSatisfy { $0.stored == $0.recounted })
        try await observer.waitForMessages("a notification for every message", timeout: .seconds(60)) { received in
            Set(received.compactMap { $0.text.firstMatch(of: /"message_id":"(m\d+)"/).map { String($0.1) } }).count == 100
        }
        #expect(fixture.herald?.child.isRunning == true, "the gateway waited the outage out")
        for peer in [observer, client] { try await peer.close() }
    }

    /// A failover that the server's name has not caught up with: Herald's connections are cut and new ones
    /// reach a server that accepts no writes. Herald refuses such a connection, says why, and keeps trying
    /// fresh ones until one reaches a writable server, with nothing lost.
    @Test func aReadOnlyServerIsLeftForAFreshConnectionUntilOneCanWrite() async throws {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.createDatabase()
        let database = String(url.split(separator: "/").last ?? "")
        let fixture = try await GatewayFixture(storeURL: url)
        try await fixture.startHerald()
        let ready = fixture.configuration.adminURL + "/readyz"
        try await eventually("ready") { (try? await fetch(ready).status) == 200 }
        let store = try await offCooperativePool {
            try PostgresChatStore(settings: PostgresStoreSettings(url: url + "?application_name=observer"),
                                  logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        }
        let client = try await TestMQTTClient(port: fixture.broker.port)
        func publish(_ range: Range<Int>) throws {
            for index in range { try client.publish("chats/c1/messages", messageJSON(id: "m\(index)", from: "alice", to: ["bob"])) }
        }
        try publish(0..<20)
        try await eventually("the first 20 stored") { try store.statistics().messages == 20 }

        try await cluster.psql(database: "postgres", "ALTER DATABASE \(database) SET default_transaction_read_only = on")
        try await cluster.psql(database: "postgres", """
            SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '\(database)' AND application_name LIKE 'herald/%'
            """)
        try publish(20..<40)
        try await client.waitForAcknowledgements(40)
        try await eventually("not ready, saying the server accepts no writes", timeout: .seconds(30)) {
            guard let response = try? await fetch(ready) else { return false }
            return response.status == 503 && response.body.contains("accepts no writes")
        }
        try await cluster.psql(database: "postgres", "ALTER DATABASE \(database) RESET default_transaction_read_only")
        try await eventually("all 40 stored once a connection can write", timeout: .seconds(60)) { (try? store.statistics().messages) == 40 }
        #expect(try store.badge(for: "bob").unread == 40)
        #expect(try store.unreadAgainstRecount().allSatisfy { $0.stored == $0.recounted })
        try await client.close()
    }

    /// A primary demoted in place (it stays up, read-only, under Herald's open connections) and its standby
    /// promoted, both in the URL: until the promotion, readiness says no server accepts writes, for the
    /// store and for the source that cannot renew its lease; then Herald leaves its connections to the old
    /// primary and writes to the new one, with nothing lost.
    @Test func aPrimaryDemotedInPlaceIsLeftForThePromotedStandby() async throws {
        let primary = try await PostgresCluster()  // its own: this test changes the server's settings
        let standby = try await PostgresCluster(standbyOf: primary)
        let database = try await String(primary.createDatabase().split(separator: "/").last ?? "")
        try await eventually("the new database to reach the standby") { (try? await standby.psql(database: database, "SELECT 1")) != nil }
        func messages(on cluster: PostgresCluster) async -> Int? {
            (try? await cluster.psql(database: database, "SELECT count(*) FROM messages")).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        let fixture = try await GatewayFixture(storeURL: "postgres://herald@127.0.0.1:\(primary.port),127.0.0.1:\(standby.port)/\(database)",
                                               topLevelExtra: "instance:\n  lease_ttl_s: 1")  // the source renews its lease every 333 ms
        try await fixture.startHerald()
        let ready = fixture.configuration.adminURL + "/readyz"
        try await eventually("ready") { (try? await fetch(ready).status) == 200 }
        let client = try await TestMQTTClient(port: fixture.broker.port)
        try client.publish("chats/c1/messages", messageJSON(id: "m0", from: "alice", to: ["bob"]))
        try await eventually("the first message stored on the primary and replicated") {
            let onPrimary = await messages(on: primary), onStandby = await messages(on: standby)
            return onPrimary == 1 && onStandby == 1
        }

        try await primary.psql(database: "postgres", "ALTER SYSTEM SET default_transaction_read_only = on")
        try await primary.psql(database: "postgres", "SELECT pg_reload_conf()")
        try await eventually("not ready, saying no server accepts writes, and the source cannot take its lease", timeout: .seconds(30)) {
            guard let response = try? await fetch(ready) else { return false }
            return response.status == 503 && response.body.contains("store not writable") && response.body.contains("accepts no writes")
                && response.body.contains("source broker: cannot take the source's lease")
        }
        try client.publish("chats/c1/messages", messageJSON(id: "m1", from: "alice", to: ["bob"]))
        try await standby.promote()
        try await eventually("the second message stored on the promoted standby", timeout: .seconds(60)) { await messages(on: standby) == 2 }
        try await eventually("ready again", timeout: .seconds(30)) { (try? await fetch(ready).status) == 200 }
        #expect(await messages(on: primary) == 1, "nothing written to the demoted primary")
        let badge = try await fixture.cli(["badge", "bob"])
        #expect(badge.status == 0 && badge.output.contains(#""unread":2"#), "\(badge.output)")
        try await client.close()
    }

    /// A primary and its streaming standby, both in the URL (libpq's list of servers, the standby first):
    /// Herald writes to the primary; when the primary stops and the standby is promoted, Herald goes on
    /// there by itself, with every message stored once.
    @Test func aListOfServersFollowsThePrimaryThroughAFailover() async throws {
        let primary = try await PostgresCluster()  // its own: this test stops it
        let standby = try await PostgresCluster(standbyOf: primary)
        let database = try await String(primary.createDatabase().split(separator: "/").last ?? "")
        try await eventually("the new database to reach the standby") { (try? await standby.psql(database: database, "SELECT 1")) != nil }
        func messages(on cluster: PostgresCluster) async -> Int? {
            (try? await cluster.psql(database: database, "SELECT count(*) FROM messages")).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        let url = "postgres://herald@127.0.0.1:\(standby.port),127.0.0.1:\(primary.port)/\(database)"
        let fixture = try await GatewayFixture(storeURL: url)
        try await fixture.startHerald()
        let client = try await TestMQTTClient(port: fixture.broker.port)
        func publish(_ range: Range<Int>) throws {
            for index in range { try client.publish("chats/c\(index % 3)/messages", messageJSON(id: "m\(index)", from: "alice", to: ["bob"])) }
        }
        try publish(0..<30)
        try await eventually("the first 30 stored on the primary") { await messages(on: primary) == 30 }
        #expect(try await primary.psql(database: "postgres", "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'herald/writer'")
            .trimmingCharacters(in: .whitespacesAndNewlines) == "1", "the writer is on the primary, not the standby listed first")

        try await primary.stop()
        try await standby.promote()
        try publish(30..<60)
        try await client.waitForAcknowledgements(60)
        try await eventually("all 60 stored on the promoted standby", timeout: .seconds(60)) { await messages(on: standby) == 60 }
        let badge = try await fixture.cli(["badge", "bob"])
        #expect(badge.status == 0 && badge.output.contains(#""unread":60"#), "\(badge.output)")
        let verify = try await fixture.cli(["store", "verify"])
        #expect(verify.status == 0, "every counter equals a recount: \(verify.output)")
        #expect(fixture.logs.contains("PostgreSQL: writing to another server of the list now (a failover?).")
                && fixture.logs.contains("from=127.0.0.1:\(primary.port)") && fixture.logs.contains("to=127.0.0.1:\(standby.port)"), "\(fixture.logs)")
        // The metrics tell the same story: the writer on the promoted standby, refused there while it was one.
        let metrics = try await fetch(fixture.configuration.adminURL + "/metrics").body
        for sample in [#"herald_store_connected{role="writer",server="127.0.0.1:\#(standby.port)"} 1.0"#,
                       #"herald_store_connected{role="writer",server="127.0.0.1:\#(primary.port)"} 0.0"#,
                       #"herald_store_connection_failures_total{role="writer",server="127.0.0.1:\#(standby.port)",reason="read_only"} "#,
                       #"herald_store_connects_total{role="writer",server="127.0.0.1:\#(primary.port)"} 1"#] {
            #expect(metrics.contains(sample), "\(sample)")
        }
        try await client.close()
    }

    @Test func anUnreachableServerStopsStartWithOneClearLine() async throws {
        let port = try Loopback.freePort()
        let fixture = try await GatewayFixture(storeURL: "postgres://herald@127.0.0.1:\(port)/chats")
        let run = try await fixture.cli(["run"])
        #expect(run.status != 0)
        #expect(run.output.contains("cannot connect to PostgreSQL at postgres://herald@127.0.0.1:\(port)/chats"), "\(run.output)")
    }
}
