import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldPostgres
import HeraldTestKit
import Synchronization
import Testing

/// Three instances on one PostgreSQL database behind MQTT 5 shared subscriptions, with instances
/// killed mid-stream.
@Suite("Scale-out: several instances on one store", .serialized)
struct ScaleOutTests {
    @Test func fiftyThousandMessagesThroughThreeInstancesWithTwoKillsAreStoredOnceCountedOnceAndNotified() async throws {
        let world = try await ScaleOutWorld(count: 3)
        for index in 0..<3 { try await world.start(index) }
        let total = 50_000, chats = 500, focusedChats = 20
        let users = (0..<50).map { "u\($0)" }
        // Chat k: users[k % 50] writes to users[(k + 1) % 50], who reads now and then.
        func recipient(_ chat: Int) -> String { users[(chat + 1) % 50] }
        let notified = Mutex<Set<String>>([])
        // Each recipient's notifications in the order they arrived, first occurrences only.
        let arrivals = Mutex<[String: [String]]>([:])
        let observer = try await TestMQTTClient(port: world.broker.port, subscriptions: ["users/+/notifications"], maxInflight: 1000) { received in
            guard let id = received.text.firstMatch(of: /"message_id":"([^"]+)"/)?.1 else { return }
            let user = String(received.topic.split(separator: "/")[1])
            if notified.withLock({ $0.insert("\(id)→\(user)").inserted }) {
                arrivals.withLock { $0[user, default: []].append(String(id)) }
            }
        }
        // Each recipient's last badge: with three writers, a badge built in one commit can miss another's.
        let lastBadges = Mutex<[String: String]>([:])
        let badgeObserver = try await TestMQTTClient(port: world.broker.port, subscriptions: ["users/+/badge"], maxInflight: 1000) { received in
            lastBadges.withLock { $0[String(received.topic.split(separator: "/")[1])] = received.text }
        }
        let client = try await TestMQTTClient(port: world.broker.port, maxInflight: 1000)
        // The recipients of the first chats look at them: presence stored by one instance must keep the
        // others from notifying.
        for chat in 0..<focusedChats {
            try client.publish("users/\(recipient(chat))/presence", #"{"chat":"c\#(chat)","state":"open"}"#)
        }
        try await eventually("presence stored") { try await world.query("SELECT count(*) FROM presence") == "\(focusedChats)" }
        var lastRead: [Int: Int] = [:]
        let publisher = Task { () -> [Int: Int] in
            var reads: [Int: Int] = [:]
            for index in 0..<total {
                let chat = index % chats
                try client.publish("chats/c\(chat)/messages", messageJSON(id: "m\(index)", from: users[chat % 50], to: [recipient(chat)],
                                                                          sentAt: 1_000_000 + Int64(index)))
                if index % 7 == 0, index >= 50 * chats {
                    // A read of a message published 50 rounds earlier in the same chat.
                    let upTo = index - 50 * chats
                    try client.publish("users/\(recipient(chat))/read", #"{"chat":"c\#(chat)","up_to":"m\#(upTo)"}"#)
                    reads[chat] = max(reads[chat] ?? 0, upTo)
                }
                if index % 1000 == 999 { await Task.yield() }
            }
            return reads
        }
        // First kill: the instance delivering the outbox; another takes the delivery over within the lease TTL.
        try await eventually("a third stored", timeout: .seconds(120)) { try world.store.statistics().messages >= total / 3 }
        for index in 0..<3 {
            // The total since start, not `rates_per_s.applied` (which a busy second can leave at 0).
            let status = try JSONSerialization.jsonObject(with: Data(try Loopback.get(port: world.adminPorts[index], path: "/v1/status").utf8))
            let applied = ((status as? [String: Any])?["totals"] as? [String: Any])?["applied"] as? Int ?? 0
            #expect(applied > 0, "instance \(index) applied nothing: the broker did not share the stream")
        }
        let deliverer = try #require(try world.holder(of: "outbox:push"), "no instance holds the outbox lease")
        try await world.kill9(deliverer)
        var storedAtKills = [try world.store.statistics().messages]
        try await eventually("the outbox lease to pass to a survivor", timeout: .seconds(30)) {
            guard let holder = try world.holder(of: "outbox:push") else { return false }
            return holder != deliverer
        }
        try await world.start(deliverer)
        // Second kill: another instance, restarted at once.
        try await eventually("two thirds stored", timeout: .seconds(120)) { try world.store.statistics().messages >= 2 * total / 3 }
        let second = (deliverer + 1) % 3
        try await world.kill9(second)
        storedAtKills.append(try world.store.statistics().messages)
        try await world.start(second)
        lastRead = try await publisher.value
        try await client.waitForAcknowledgements(total + focusedChats + lastRead.count, timeout: .seconds(120))

        #expect(storedAtKills.allSatisfy { $0 < total }, "a kill landed after the stream ended: \(storedAtKills)")
        try await eventually("all \(total) stored", timeout: .seconds(180)) { try world.store.statistics().messages == total }
        try await eventually("the outbox drained", timeout: .seconds(180)) { try world.store.statistics().outbox == 0 }
        // Every recipient's last badge counts what the store counts.
        let stored = try Set(users.map { user in "\(user) \(try world.store.badge(for: UserID(user)).unread)" })
        try await eventually("every recipient's last badge equal to the store's count", timeout: .seconds(60)) {
            let last = lastBadges.withLock { $0 }
            return Set(users.compactMap { user in
                last[user]?.firstMatch(of: /"unread":(\d+)/).map { "\(user) \($0.1)" } ?? "\(user) 0"
            }) == stored
        }
        for row in try world.store.unreadAgainstRecount() where row.stored != row.recounted {
            Issue.record("unread of \(row.user) in \(row.chat): stored \(row.stored), recount \(row.recounted)")
        }
        // Every message after its recipient's last read, in a chat the recipient is not looking at,
        // was notified at least once.
        var expected: Set<String> = []
        for index in 0..<total {
            let chat = index % chats
            if chat >= focusedChats, index > (lastRead[chat] ?? -1) { expected.insert("m\(index)→\(recipient(chat))") }
        }
        #expect(expected.count > total / 2)
        try await eventually("every due notification received", timeout: .seconds(60)) {
            notified.withLock { expected.isSubset(of: $0) }
        }
        let focused = notified.withLock { set in set.filter { entry in
            guard let number = Int(entry.dropFirst().prefix { $0 != "→" }) else { return false }
            return number % chats < focusedChats
        } }
        #expect(focused.isEmpty, "notified while the recipient looked at the chat: \(focused.prefix(5))")
        // Per recipient and chat, notifications arrive in commit order. A chat's batches commit one after
        // another (its lock), and a message's `seq` is drawn inside that commit, so `seq` is that order.
        var sequence: [String: Int] = [:]
        for line in try await world.query("SELECT id, seq FROM messages").split(separator: "\n") {
            let fields = line.split(separator: "|")
            if fields.count == 2, let value = Int(fields[1]) { sequence[String(fields[0])] = value }
        }
        var outOfOrder: [String] = []
        for (user, ids) in arrivals.withLock({ $0 }) {
            var last: [Int: Int] = [:]
            for id in ids {
                guard let number = Int(id.dropFirst()), let seq = sequence[id] else { continue }
                let chat = number % chats
                if let previous = last[chat], previous > seq { outOfOrder.append("\(user) got \(id) after a later message of c\(chat)") }
                last[chat] = seq
            }
        }
        #expect(outOfOrder.isEmpty, "\(outOfOrder.count) notifications out of commit order: \(outOfOrder.prefix(3))")
        try await client.close()
        try await observer.close()
        try await badgeObserver.close()
    }

    @Test func aSingletonRESTSourceMovesToASurvivorAndItsCursorGoesOnWithoutGapOrRepeat() async throws {
        let upstream = try TemporaryDirectory(prefix: "herald-rest-upstream")
        let server = try await ChatServer(.rest, in: upstream, arguments: ["--page-size", "5"])
        try server.append(FeedEvents.conversation(30))
        let rest = RESTSourceTests.source(port: server.port)
            .replacingOccurrences(of: "sources:\n", with: "").replacingOccurrences(of: "    token_file: TOKEN_FILE\n", with: "")
        let world = try await ScaleOutWorld(count: 2, extraSources: rest)
        for index in 0..<2 { try await world.start(index) }
        try await eventually("the first 30 polled", timeout: .seconds(60)) { try world.store.statistics().messages == 30 }
        let runner = try #require(try world.holder(of: "source:backend"))
        let standby = 1 - runner
        let status = try Loopback.get(port: world.adminPorts[standby], path: "/v1/status")
        #expect(status.contains(#""standby":true"#), "the other instance should stand by: \(status)")
        #expect(try Loopback.get(port: world.adminPorts[standby], path: "/readyz").contains(#""ready":true"#), "standing by is not unready")
        let metrics = try Loopback.get(port: world.adminPorts[runner], path: "/metrics")
        #expect(metrics.contains(#"herald_lease_held{lease="source:backend"} 1"#), "the runner's metrics show its lease")
        #expect(!metrics.contains(#"lease="source:broker""#), "the shared MQTT source takes no lease")

        try await world.kill9(runner)
        let cursorAtKill = try #require(try world.store.checkpoint(source: "backend", key: "events/cursor"))
        let killedAt = Date().timeIntervalSince1970
        try server.append(FeedEvents.conversation(20, start: 30))
        try await eventually("the survivor to take the source over and poll the rest", timeout: .seconds(30)) {
            try world.store.statistics().messages == 50
        }
        #expect(try world.holder(of: "source:backend") == standby)
        let after = try server.log("requests").filter { ($0["time"] as? Double ?? 0) > killedAt }.compactMap { $0["path"] as? String }
        #expect(after.first?.contains("cursor=\(cursorAtKill)") == true, "the survivor did not start at the stored cursor \(cursorAtKill): \(after.prefix(3))")
        #expect(try world.store.checkpoint(source: "backend", key: "events/cursor") == "51")
        #expect(try world.store.unreadAgainstRecount().allSatisfy { $0.stored == $0.recounted })
    }

    @Test func aTenSecondDatabaseOutageStopsEveryInstanceAndEachResumesWithNothingLost() async throws {
        let cluster = try await PostgresCluster()  // its own: this test stops it
        let world = try await ScaleOutWorld(count: 3, cluster: cluster)
        for index in 0..<3 { try await world.start(index) }
        let client = try await TestMQTTClient(port: world.broker.port, maxInflight: 1000)
        func publish(_ range: Range<Int>) throws {
            for index in range {
                try client.publish("chats/c\(index % 30)/messages", messageJSON(id: "m\(index)", from: "alice", to: ["bob"], sentAt: 1_000_000 + Int64(index)))
            }
        }
        try publish(0..<1_000)
        try await eventually("the first 1,000 stored", timeout: .seconds(60)) { try world.store.statistics().messages == 1_000 }
        try await cluster.stop()
        let down = ContinuousClock.now
        try publish(1_000..<3_000)
        try await client.waitForAcknowledgements(3_000)  // the broker holds them for the instances
        for index in 0..<3 {
            try await eventually("instance \(index) not ready, naming the store", timeout: .seconds(30)) {
                let body = (try? Loopback.get(port: world.adminPorts[index], path: "/readyz")) ?? ""
                return body.contains(#""ready":false"#) && body.contains("store")
            }
        }
        // The outage lasts 10 s, as an operator's failover or restart might.
        try await Task.sleep(until: down + .seconds(10))
        try await cluster.start()
        try await eventually("all 3,000 stored after the outage", timeout: .seconds(120)) { (try? world.store.statistics().messages) == 3_000 }
        for index in 0..<3 {
            try await eventually("instance \(index) ready again", timeout: .seconds(30)) {
                ((try? Loopback.get(port: world.adminPorts[index], path: "/readyz")) ?? "").contains(#""ready":true"#)
            }
            #expect(world.processes[index]?.child.isRunning == true, "instance \(index) exited during the outage")
        }
        #expect(try world.store.badge(for: "bob").unread == 3_000, "every message counted once")
        #expect(try world.store.unreadAgainstRecount().allSatisfy { $0.stored == $0.recounted })
        try await eventually("the outbox drained", timeout: .seconds(60)) { try world.store.statistics().outbox == 0 }
        try await client.close()
    }

    @Test func theShippedClusterConfigRunsAsTwoInstancesThatShareTheWork() async throws {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.createDatabase()
        let broker = try await MosquittoBroker()
        let directory = try TemporaryDirectory(prefix: "herald-cluster-config")
        // The secrets the config names under /etc/herald, here in a temporary folder.
        for name in ["db-password", "mqtt-password", "admin-token"] { _ = try directory.write(name, "unused-\(name)\n") }
        let shipped = try String(contentsOf: ShippedConfigTests.root.appendingPathComponent("deploy/config/herald-cluster.yaml"), encoding: .utf8)
        let config = try directory.write("cluster.yaml", shipped.replacingOccurrences(of: "/etc/herald/", with: directory.path("") + "/"))
        var processes: [HeraldProcess] = []
        defer { for process in processes { process.child.signal(SIGTERM) } }
        for name in ["a", "b"] {
            let environment = ["PATH": "/usr/bin:/bin", "HERALD_INSTANCE": name, "HERALD_DATABASE_URL": url, "HERALD_MQTT_URL": broker.url,
                               "HERALD_ADMIN_LISTEN": "127.0.0.1:\(try Loopback.freePort())"]
            let check = try ChildProcess(executable: HeraldProcess.binary, arguments: ["check", "--config", config],
                                         logPath: directory.path("check-\(name).log"), environment: environment)
            #expect(try await check.waitForExit() == 0, "herald check: \(check.output)")
            let process = try HeraldProcess(configPath: config, logPath: directory.path("herald-\(name).log"), environment: environment)
            processes.append(process)
            try await process.waitUntilConnected(connections: 2, timeout: .seconds(60))
        }
        let observer = try await TestMQTTClient(port: broker.port, subscriptions: ["users/bob/notifications"])
        let badges = try await TestMQTTClient(port: broker.port, subscriptions: ["users/bob/badge"])
        let client = try await TestMQTTClient(port: broker.port)
        for index in 0..<400 {
            try client.publish("chats/c\(index % 8)/messages", messageJSON(id: "m\(index)", from: "alice", to: ["bob"], sentAt: 1_000 + Int64(index)))
        }
        let store = try await offCooperativePool { try PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }) }
        try await eventually("400 stored", timeout: .seconds(60)) { try store.statistics().messages == 400 }
        try await observer.waitForMessages("400 notifications", timeout: .seconds(60)) { Set($0.map(\.text)).count == 400 }
        for process in processes {
            #expect(process.child.output.contains("instance"), "the start-up log names the instance")
            #expect(process.child.isRunning)
        }
        #expect(try store.badge(for: "bob").unread == 400)
        // The badges' sink delivers too: bob's last badge counts all 400.
        let counted = (try? await badges.waitForMessages("bob's badge at 400", timeout: .seconds(60)) {
            $0.last?.text.contains("\"unread\":400") == true
        }) != nil
        #expect(counted, "bob's last badges: \(badges.received.suffix(3).map(\.text)) of \(badges.received.count)")
        try await client.close()
        try await observer.close()
        try await badges.close()
    }
}
