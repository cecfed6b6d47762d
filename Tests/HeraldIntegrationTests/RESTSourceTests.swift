import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Testing

/// The REST polling source against a real HTTP server (Tests/Servers/chat_server.py) and the real binary.
@Suite("REST polling source")
struct RESTSourceTests {
    static func source(port: Int, path: String = "/events", cursor: String = "cursor:\n          from: field\n          pointer: /next_cursor",
                       items: String = "/items", extra: String = "") -> String {
        """
        sources:
          - name: backend
            type: rest
            token_file: TOKEN_FILE
        \(extra)
            endpoints:
              - name: events
                url: http://127.0.0.1:\(port)\(path)
                interval_s: 0.2
                items: "\(items)"
                \(cursor)
        """
    }

    @Test("first sync pages through everything, then polls cost a 304; the token file is sent")
    func firstSyncThenNotModified() async throws {
        let world = try UpstreamWorld(prefix: "herald-rest")
        let server = try await ChatServer(.rest, in: world.directory, arguments: ["--page-size", "5"])
        try server.append(FeedEvents.conversation(14))
        let token = try world.directory.write("token", "s3cret\n")
        try world.configure(Self.source(port: server.port).replacingOccurrences(of: "TOKEN_FILE", with: token))
        try world.start()
        try await world.waitForMessages(14)
        try await world.waitFor("two polls answered 304") {
            try server.log("requests").filter { $0["status"] as? Int == 304 }.count >= 2
        }
        let requests = try server.log("requests")
        #expect(requests.allSatisfy { $0["authorization"] as? String == "Bearer s3cret" })
        #expect(try world.store().badge(for: UserID("bob")).unread == 14)
        #expect(try world.store().checkpoint(source: "backend", key: "events/cursor") == "15")
        let status = try Loopback.get(port: world.adminPort, path: "/v1/status")
        #expect(status.contains("\"events/cursor\":\"15\""), "\(status)")
    }

    @Test("Last-Modified: unchanged data costs a 304; new data is fetched")
    func lastModified() async throws {
        let world = try UpstreamWorld(prefix: "herald-rest-lm")
        let server = try await ChatServer(.rest, in: world.directory, arguments: ["--page-size", "5", "--validators", "last-modified"])
        try server.append(FeedEvents.conversation(7))
        try world.configure(Self.source(port: server.port).replacingOccurrences(of: "    token_file: TOKEN_FILE\n", with: ""))
        try world.start()
        try await world.waitForMessages(7)
        try await world.waitFor("two conditional polls answered 304") {
            try server.log("requests").filter { $0["status"] as? Int == 304 && $0["if_modified_since"] as? String != nil }.count >= 2
        }
        try server.append(FeedEvents.conversation(3, start: 7))
        try await world.waitForMessages(10)
        // The new date is stored with the last page and sent from then on.
        let before = try server.log("requests").count
        try await world.waitFor("a 304 for the new date") {
            let stored = try world.store().checkpoint(source: "backend", key: "events/last_modified")
            return try server.log("requests").dropFirst(before).contains {
                $0["status"] as? Int == 304 && $0["if_modified_since"] as? String == stored && stored != nil
            }
        }
    }

    @Test("pages follow Link rel=next headers")
    func linkPagination() async throws {
        let world = try UpstreamWorld(prefix: "herald-rest-link")
        let server = try await ChatServer(.rest, in: world.directory, arguments: ["--page-size", "4"])
        try server.append(FeedEvents.conversation(17))
        try world.configure(Self.source(port: server.port, path: "/linked", cursor: "cursor:\n          from: link", items: "")
            .replacingOccurrences(of: "    token_file: TOKEN_FILE\n", with: ""))
        try world.start()
        try await world.waitForMessages(17)
        let pages = try server.log("requests").compactMap { $0["path"] as? String }
        #expect(pages.contains("/linked?page=4"), "\(pages)")
    }

    @Test("kill -9 at any point: the stored cursor always equals what the store holds, and the restart resumes from it")
    func cursorSurvivesKill() async throws {
        let world = try UpstreamWorld(prefix: "herald-rest-kill")
        let server = try await ChatServer(.rest, in: world.directory, arguments: ["--page-size", "1"])
        // One event per page: 1 chat.created + 80 messages, so the cursor counts the events committed.
        try server.append(FeedEvents.conversation(80))
        try world.configure(Self.source(port: server.port).replacingOccurrences(of: "    token_file: TOKEN_FILE\n", with: ""))
        let first = try world.start()
        try await world.waitForMessages(20)
        try await first.child.kill9()
        let store = try world.store()
        let cursor = try #require(try store.checkpoint(source: "backend", key: "events/cursor"))
        let stored = try store.statistics().messages
        #expect(Int(cursor) == stored + 1, "cursor \(cursor) but \(stored) messages (+1 chat.created)")
        let before = try server.log("requests").count
        try world.start()
        try await world.waitForMessages(80)
        // The first run may have stored all 80 before the kill: wait for the restart's first request.
        try await eventually("the restarted gateway's first request") { try server.log("requests").count > before }
        let resumed = try server.log("requests")[before]["path"] as? String
        #expect(resumed == "/events?cursor=\(cursor)")
        #expect(try world.metric("herald_events_duplicate_total") == 0)
    }

    @Test("429 honours Retry-After, 5xx backs off, a garbage page is dead-lettered once and polling goes on")
    func failures() async throws {
        let world = try UpstreamWorld(prefix: "herald-rest-faults")
        let server = try await ChatServer(.rest, in: world.directory, arguments: ["--page-size", "50"])
        try server.append(FeedEvents.conversation(3))
        try server.control("/faults", ["faults": [["status": 429, "retry_after": "1"], ["status": 500], ["status": 503],
                                                  ["garbage": true], ["garbage": true]]])
        try world.configure(Self.source(port: server.port).replacingOccurrences(of: "    token_file: TOKEN_FILE\n", with: ""))
        try world.start()
        try await world.waitForMessages(3)
        let requests = try server.log("requests")
        let times = requests.compactMap { $0["time"] as? Double }
        #expect(requests.prefix(3).compactMap { $0["status"] as? Int } == [429, 500, 503])
        #expect(times[1] - times[0] >= 0.95, "the request after a 429 with Retry-After: 1 came \(times[1] - times[0]) s later")
        let letters = try world.store().deadLetters(limit: 10, includeReplayed: true)
        #expect(letters.count == 1, "the same garbage page twice is dead-lettered once")
        #expect(letters.first?.rejection.reason == .unreadableResponse)
        #expect(letters.first?.rejection.detail.contains("HTTP 200 from http://127.0.0.1:\(server.port)/events") == true)
        #expect(world.logs.contains("Poll failed; retrying."))
    }

    @Test("https: the trusted, pinned server is polled; an untrusted one is refused with a clear reason")
    func https() async throws {
        let world = try UpstreamWorld(prefix: "herald-rest-tls")
        let certificates = try await TestCertificates(in: world.directory)
        let tls = (certificates.serverCertFile, certificates.serverKeyFile)
        let good = try await ChatServer(.rest, in: world.directory, tls: tls)
        let untrusted = try await ChatServer(.rest, in: world.directory, tls: tls)
        try good.append(FeedEvents.conversation(3))
        try untrusted.append(FeedEvents.conversation(3, chat: "c2"))
        let pin = try await WebSocketTLSTests.pin(of: certificates.serverCertFile, in: world.directory)
        func source(_ name: String, _ server: ChatServer, tls: String) -> String {
            """
              - name: \(name)
                type: rest
                tls: \(tls)
                endpoints:
                  - {name: events, url: "https://localhost:\(server.port)/events", interval_s: 0.2, cursor: {from: field, pointer: /next_cursor}}

            """
        }
        try world.configure("sources:\n" + source("good", good, tls: "{ca_file: \(certificates.caFile), pins: [\"\(pin)\"]}")
                            + source("untrusted", untrusted, tls: "{ca_file: \(certificates.otherCAFile)}"))
        try world.start()
        try await world.waitForMessages(3)
        try await world.waitForLog("not signed by a trusted CA (trusting CA file \(certificates.otherCAFile))")
        #expect(try untrusted.log("requests").isEmpty)
        #expect(try world.store().statistics().messages == 3)
    }
}
