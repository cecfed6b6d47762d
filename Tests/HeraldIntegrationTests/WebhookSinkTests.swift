import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import NetworkAdapterSupport
import RESTAdapter
import Testing

/// The webhook sink against a real HTTP receiver, fed by the REST source (the whole path: poll → store
/// → outbox → signed POST).
@Suite("Webhook sink")
struct WebhookSinkTests {
    static let secret = "whsec_" + Data("a test signing key of some length".utf8).base64EncodedString()

    /// A world with one upstream server (REST pages and the webhook receiver on one port).
    static func world(_ name: String, maxAttempts: Int = 10, responses: [[String: Any]] = [],
                      serverArguments: [String] = []) async throws -> (UpstreamWorld, ChatServer) {
        let world = try UpstreamWorld(prefix: "herald-webhook-\(name)")
        let server = try await ChatServer(.rest, in: world.directory, arguments: ["--page-size", "50"] + serverArguments)
        if !responses.isEmpty { try server.control("/hook_responses", ["responses": responses]) }
        try world.configure("""
            sources:
              - name: backend
                type: rest
                endpoints:
                  - name: events
                    url: http://127.0.0.1:\(server.port)/events
                    interval_s: 0.2
                    cursor: {from: field, pointer: /next_cursor}
            sinks:
              - name: hooks
                type: webhook
                secret: "\(secret)"
                max_attempts: \(maxAttempts)
                token: hook-token
                urls:
                  notification: http://127.0.0.1:\(server.port)/hooks/notify
                  badge: http://127.0.0.1:\(server.port)/hooks/badge
            """)
        return (world, server)
    }

    static func hooks(_ server: ChatServer, _ name: String) throws -> [[String: Any]] {
        try server.log("hooks").filter { $0["name"] as? String == name }
    }

    /// Whether a badge with `unread` messages was delivered (badges are queued once per user per commit, so
    /// the number of badge requests depends on how the messages were batched; the last count does not).
    static func badgeDelivered(_ server: ChatServer, unread: Int) throws -> Bool {
        try hooks(server, "badge").contains { hook in
            guard hook["status"] as? Int == 200, let body = (hook["body"] as? String).map({ Data($0.utf8) }),
                  let envelope = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return false }
            return (envelope["data"] as? [String: Any])?["unread"] as? Int == unread
        }
    }

    @Test("deliveries are signed verifiably; retries keep the webhook-id and honour Retry-After")
    func signedAndRetried() async throws {
        let (world, server) = try await Self.world("retry", responses: [["status": 503, "retry_after": "1"], ["status": 500]])
        try server.append(FeedEvents.conversation(3))
        try world.start()
        try await world.waitFor("3 notifications delivered") {
            try Self.hooks(server, "notify").filter { $0["status"] as? Int == 200 }.count == 3
        }
        let notify = try Self.hooks(server, "notify")
        let signer = try #require(WebhookSigner(secret: Self.secret))
        for hook in try server.log("hooks") {
            let id = try #require(hook["id"] as? String), signature = try #require(hook["signature"] as? String)
            let timestamp = try #require(Int64(hook["timestamp"] as? String ?? ""))
            let body = Array((hook["body"] as? String ?? "").utf8)
            #expect(signer.verify(header: signature, id: id, timestamp: timestamp, body: body), "signature of \(id)")
            #expect(!signer.verify(header: signature, id: id, timestamp: timestamp + 1, body: body))
            #expect(hook["authorization"] as? String == "Bearer hook-token")
        }
        // The first output was refused twice: three attempts, one id.
        let first = try #require(notify.first)
        #expect(notify.prefix(3).map { $0["id"] as? String } == Array(repeating: first["id"] as? String, count: 3))
        #expect(notify.prefix(3).map { $0["status"] as? Int } == [503, 500, 200])
        let times = notify.compactMap { $0["time"] as? Double }
        #expect(times[1] - times[0] >= 0.95, "retry after Retry-After: 1 came \(times[1] - times[0]) s later")
        let body = try #require((notify.last?["body"] as? String).flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(body["type"] as? String == "notification")
        #expect((body["data"] as? [String: Any])?["user"] as? String == "bob")
        try await world.waitFor("the badge with 3 unread delivered") { try Self.badgeDelivered(server, unread: 3) }
    }

    @Test("410 Gone disables the URL: its outputs are dead-lettered without more requests; others go on")
    func goneDisables() async throws {
        let (world, server) = try await Self.world("gone")
        try server.control("/hook_status", ["notify": 410])
        try server.append(FeedEvents.conversation(3))
        try world.start()
        try await world.waitFor("3 outputs dead-lettered") {
            try world.store().deadLetters(limit: 10, includeReplayed: true).count == 3
        }
        try await world.waitFor("badges still delivered") { try Self.badgeDelivered(server, unread: 3) }
        let notify = try Self.hooks(server, "notify")
        #expect(notify.last?["status"] as? Int == 410, "no request after the 410: \(notify.map { $0["status"] ?? "?" })")
        #expect(notify.filter { $0["status"] as? Int == 410 }.count == 1)
        let letters = try world.store().deadLetters(limit: 10, includeReplayed: true)
        #expect(letters.allSatisfy { $0.rejection.reason == .undeliverable && $0.provenance.adapter == "hooks" })
        #expect(world.logs.contains("410 Gone"))
    }

    @Test("an output refused max_attempts times is dead-lettered and the next ones are delivered")
    func deadLetterAfterAttempts() async throws {
        let (world, server) = try await Self.world("attempts", maxAttempts: 3,
                                                   responses: [["status": 500], ["status": 500], ["status": 500]])
        try server.append(FeedEvents.conversation(2))
        try world.start()
        try await world.waitFor("the second notification delivered") {
            try Self.hooks(server, "notify").filter { $0["status"] as? Int == 200 }.count == 1
        }
        let notify = try Self.hooks(server, "notify")
        #expect(notify.map { $0["status"] as? Int } == [500, 500, 500, 200])
        #expect(Set(notify.prefix(3).compactMap { $0["id"] as? String }).count == 1)
        #expect(notify[3]["id"] as? String != notify[0]["id"] as? String)
        let letters = try world.store().deadLetters(limit: 10, includeReplayed: true)
        #expect(letters.count == 1)
        #expect(letters.first?.rejection.reason == .undeliverable)
        let raw = String(decoding: letters.first?.raw ?? [], as: UTF8.self)
        #expect(raw.contains("\"message_id\":\"m0\""), "\(raw)")
    }

    @Test("recipients are served concurrently; each recipient's notifications stay in order")
    func concurrentLanesKeepPerRecipientOrder() async throws {
        let (world, server) = try await Self.world("lanes", serverArguments: ["--hook-delay", "0.1"])
        let members = ["alice"] + (1...5).map { "user\($0)" }
        var events: [[String: Any]] = [["type": "chat.created", "chat": "group", "members": members]]
        for index in 0..<3 {
            events.append(["type": "message.received", "chat": "group", "id": "m\(index)", "from": "alice", "body": "hi \(index)",
                           "sent_at": 1_763_800_000_000 + index])
        }
        try server.append(events)
        try world.start()
        try await world.waitFor("15 notifications delivered") { try Self.hooks(server, "notify").count == 15 }
        var seen: [String: [String]] = [:]
        for hook in try Self.hooks(server, "notify") {
            let body = try #require(try JSONSerialization.jsonObject(with: Data((hook["body"] as? String ?? "").utf8)) as? [String: Any])
            let data = try #require(body["data"] as? [String: Any])
            seen[data["user"] as? String ?? "?", default: []].append(data["message_id"] as? String ?? "?")
        }
        #expect(seen.count == 5)
        #expect(seen.values.allSatisfy { $0 == ["m0", "m1", "m2"] }, "\(seen)")
        let overlap = try server.log("hooks").compactMap { $0["in_flight"] as? Int }.max() ?? 0
        #expect(overlap > 1, "requests to a 100 ms receiver were never in flight together")
    }
}
