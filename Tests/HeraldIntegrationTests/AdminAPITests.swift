import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldTestKit
import NIOCore
import NIOHTTP1
import Testing

/// Fetches a URL: status and body text.
func fetch(_ url: String, token: String? = nil) async throws -> (status: UInt, body: String) {
    var request = HTTPClientRequest(url: url)
    if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
    let body = try await response.body.collect(upTo: 16 << 20)
    return (response.status.code, String(buffer: body))
}

@Suite("Admin API and herald tail through a running gateway")
struct AdminAPITests {
    @Test func tailReceivesExactlyTheEventsThatMatchEachFilter() async throws {
        let fixture = try await GatewayFixture()
        try await fixture.startHerald()
        let url = fixture.configuration.adminURL
        let filters: [(name: String, arguments: [String])] = [
            ("type", ["--type", "messages.*"]),
            ("chat", ["--chat", "c2"]),
            ("user", ["--user", "carol"]),
            ("where", ["--where", #"message.from == "alice" && chat ~ "team-*""#]),
        ]
        var tails: [String: ChildProcess] = [:]
        for filter in filters {
            tails[filter.name] = try ChildProcess(executable: HeraldProcess.binary, arguments: ["tail", "--url", url, "--json"] + filter.arguments,
                                                  logPath: fixture.directory.path("tail-\(filter.name).log"))
        }
        try await eventually("four tail clients attached") {
            let body = try await fetch(url + "/v1/status").body
            let status = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
            return status?["tail_clients"] as? Int == 4
        }
        let client = try await TestMQTTClient(port: fixture.broker.port)
        let events: [(topic: String, payload: String)] = [
            ("chats/team-1/messages", messageJSON(id: "m1", from: "alice", to: ["bob"])),
            ("chats/c2/messages", messageJSON(id: "m2", from: "bob", to: ["carol"])),
            ("users/bob/read", #"{"chat":"team-1","up_to":"m1"}"#),
            ("chats/team-2/messages", messageJSON(id: "m3", from: "dave", to: ["alice"])),
            ("chats/team-2/messages", messageJSON(id: "m4", from: "alice", to: ["carol"])),
            ("chats/c2/created", #"{"members":["bob","carol","erin"]}"#),
            // One sentinel per filter, last: once a tail shows its sentinel, it has seen everything before it.
            ("users/zed/read", #"{"chat":"zz","up_to":"x"}"#),
            ("chats/c2/created", #"{"members":["zed2"]}"#),
            ("chats/zz/messages", messageJSON(id: "s-carol", from: "zed", to: ["carol"])),
            ("chats/team-9/messages", messageJSON(id: "s-where", from: "alice", to: ["zed"])),
        ]
        for event in events { try client.publish(event.topic, event.payload) }
        let expected: [String: [String]] = [
            "type": ["messages.read team-1", "messages.read zz"],
            "chat": ["message.received c2 m2", "chat.created c2", "chat.created c2"],
            "user": ["message.received c2 m2", "message.received team-2 m4", "chat.created c2", "message.received zz s-carol"],
            "where": ["message.received team-1 m1", "message.received team-2 m4", "message.received team-9 s-where"],
        ]
        func seen(_ name: String) -> [String] {
            (tails[name]?.output ?? "").split(separator: "\n").compactMap { line -> String? in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let type = object["type"] as? String, let chat = object["chat"] as? String else { return nil }
                let id = (object["event"] as? [String: Any])?["id"] as? String
                return [type, chat, id].compactMap { $0 }.joined(separator: " ")
            }
        }
        for (name, lines) in expected {
            try await eventually("tail --\(name) to show its sentinel") { seen(name).last == lines.last }
            #expect(seen(name) == lines, "tail --\(name)")
        }
        for tail in tails.values { tail.signal(SIGINT) }
        try await client.close()
    }

    /// A running gateway whose admin API requires `token`.
    static func gatewayWithAdminToken(_ token: String) async throws -> GatewayFixture {
        let fixture = try await GatewayFixture()
        fixture.configuration.adminExtra = "  token: \(token)"
        try fixture.configuration.yaml.write(toFile: fixture.configPath, atomically: true, encoding: .utf8)
        try await fixture.startHerald()
        return fixture
    }

    @Test func aTokenGuardsEverythingButHealthz() async throws {
        let fixture = try await Self.gatewayWithAdminToken("s3cret-token")
        let url = fixture.configuration.adminURL
        #expect(try await fetch(url + "/healthz").status == 200)
        #expect(try await fetch(url + "/readyz").status == 401)
        #expect(try await fetch(url + "/metrics", token: "wrong").status == 401)
        #expect(try await fetch(url + "/readyz", token: "s3cret-token").status == 200)
        #expect(!fixture.logs.contains("s3cret-token"))
    }

    @Test func aClientThatKeepsGuessingTheTokenIsHeldBack() async throws {
        let fixture = try await Self.gatewayWithAdminToken("s3cret-token")
        let url = fixture.configuration.adminURL
        for guess in 1...10 {
            #expect(try await fetch(url + "/v1/status", token: "guess-\(guess)").status == 401)
        }
        var request = HTTPClientRequest(url: url + "/v1/status")
        request.headers.add(name: "Authorization", value: "Bearer guess-11")
        let held = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        #expect(held.status.code == 429)
        #expect(Int(held.headers.first(name: "Retry-After") ?? "") ?? 0 > 0)
        #expect(try await fetch(url + "/v1/status", token: "s3cret-token").status == 429, "while held back, even the right token waits")
        #expect(try await fetch(url + "/healthz").status == 200)
    }

    @Test func bindingOffLoopbackWithoutATokenIsAConfigError() async throws {
        let fixture = try await GatewayFixture()
        let yaml = fixture.configuration.yaml.replacingOccurrences(of: "listen: 127.0.0.1:", with: "listen: 0.0.0.0:")
        try yaml.write(toFile: fixture.configPath, atomically: true, encoding: .utf8)
        let result = try await fixture.cli(["check"])
        #expect(result.status == 78)
        #expect(result.output.contains("admin.listen") && result.output.contains("requires a token"), "\(result.output)")
    }

    @Test func readyzFollowsTheBroker() async throws {
        let fixture = try await GatewayFixture()
        try await fixture.startHerald()
        let url = fixture.configuration.adminURL + "/readyz"
        try await eventually("ready") { await Self.status(url) == 200 }
        try await fixture.broker.stop()
        try await eventually("not ready while the broker is down") { await Self.status(url) == 503 }
        #expect(try await fetch(url).body.contains("source broker disconnected"))
        try await fixture.broker.start()
        try await eventually("ready again", timeout: .seconds(60)) { await Self.status(url) == 200 }
    }

    @Test func metricsParseAsPrometheusTextAndCountersMove() async throws {
        let fixture = try await GatewayFixture()
        try await fixture.startHerald()
        let url = fixture.configuration.adminURL + "/metrics"
        let client = try await TestMQTTClient(port: fixture.broker.port)
        for index in 0..<25 { try client.publish("chats/c1/messages", messageJSON(id: "m\(index)", from: "alice", to: ["bob"])) }
        try client.publish("chats/c1/messages", "not json")
        try await eventually("stored") { try fixture.store().statistics().messages == 25 }
        // Checkpoints run every 500 ms and report how long they held the writer.
        try await eventually("a checkpoint's writer pass in the metrics") {
            try await fetch(url).body.split(separator: "\n").contains {
                $0.hasPrefix("herald_wal_checkpoint_writer_pass_seconds_count") && !$0.hasSuffix(" 0")
            }
        }
        let text = try await fetch(url).body
        let file = try fixture.directory.write("metrics.txt", text)
        let script = try fixture.directory.write("parse.py", """
            import sys
            from prometheus_client.parser import text_string_to_metric_families
            values = {}
            for family in text_string_to_metric_families(open(sys.argv[1]).read()):
                for sample in family.samples:
                    values[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
            print(int(values[("herald_events_normalised_total", (("adapter", "broker"),))]))
            print(int(values[("herald_events_dead_lettered_total", (("adapter", "broker"),))]))
            print(int(values[("herald_source_connected", (("adapter", "broker"),))]))
            print(int(values[("herald_ingest_lag_seconds_count", ())] > 0))
            """)
        let parser = try ChildProcess(executable: "/usr/bin/env", arguments: ["python3", script, file], logPath: fixture.directory.path("parse.log"))
        #expect(try await parser.waitForExit() == 0, "\(parser.output)")
        #expect(parser.output.split(separator: "\n") == ["25", "1", "1", "1"], "\(parser.output)")
        try await client.close()
    }

    static func status(_ url: String) async -> UInt? { try? await fetch(url).status }
}

@Suite("herald tail --source URL")
struct StandaloneTailTests {
    @Test func runsTheSourceAloneAndLeavesTheGatewaySessionUntouched() async throws {
        let fixture = try await GatewayFixture()
        let herald = try await fixture.startHerald()  // creates the gateway's persistent session
        herald.child.signal(SIGTERM)
        _ = try await herald.child.waitForExit()

        let tail = try ChildProcess(executable: HeraldProcess.binary,
                                    arguments: ["tail", "--source", fixture.broker.url, "--json", "--limit", "1", "--config", fixture.configPath],
                                    logPath: fixture.directory.path("standalone.log"))
        try await eventually("the standalone source to connect") { fixture.broker.log.contains("as herald-tail-") }
        let client = try await TestMQTTClient(port: fixture.broker.port)
        try client.publish("chats/c1/messages", messageJSON(id: "while-down", from: "alice", to: ["bob"]))
        #expect(try await tail.waitForExit() == 0, "\(tail.output)")
        #expect(tail.output.contains("\"id\":\"while-down\"") && tail.output.contains("nothing is stored"))
        #expect(try fixture.store().statistics().messages == 0)

        // The gateway's session kept the message: it arrives when the gateway is back.
        try await fixture.startHerald()
        try await eventually("the queued message reaches the gateway") { try fixture.store().statistics().messages == 1 }
        try await client.close()
    }
}

@Suite("herald tail connection handling")
struct TailConnectionTests {
    @Test func noGatewayIsAnErrorAPersonCanActOn() async throws {
        let directory = try TemporaryDirectory()
        let tail = try ChildProcess(executable: HeraldProcess.binary, arguments: ["tail", "--url", "http://127.0.0.1:\(try Loopback.freePort())"],
                                    logPath: directory.path("tail.log"))
        #expect(try await tail.waitForExit() == 1)
        #expect(tail.output.contains("Herald is not running at"), "\(tail.output)")
    }

    @Test func tailReconnectsByItselfWhenTheGatewayRestartsAndSaysSo() async throws {
        let fixture = try await GatewayFixture()
        let first = try await fixture.startHerald()
        let tail = try ChildProcess(executable: HeraldProcess.binary,
                                    arguments: ["tail", "--url", fixture.configuration.adminURL, "--json", "--limit", "2"],
                                    logPath: fixture.directory.path("tail.log"))
        let client = try await TestMQTTClient(port: fixture.broker.port)
        try await eventually("the tail to attach") {
            (try? await fetch(fixture.configuration.adminURL + "/v1/status").body.contains("\"tail_clients\":1")) == true
        }
        try client.publish("chats/c1/messages", messageJSON(id: "before", from: "alice", to: ["bob"]))
        try await eventually("the first event") { tail.output.contains("\"id\":\"before\"") }
        first.child.signal(SIGTERM)
        _ = try await first.child.waitForExit()
        try await fixture.startHerald()
        try await eventually("the tail to reattach") {
            (try? await fetch(fixture.configuration.adminURL + "/v1/status").body.contains("\"tail_clients\":1")) == true
        }
        try client.publish("chats/c1/messages", messageJSON(id: "after", from: "alice", to: ["bob"], sentAt: 1_763_800_001_000))
        #expect(try await tail.waitForExit(timeout: .seconds(30)) == 0, "\(tail.output)")
        #expect(tail.output.contains("\"id\":\"after\""))
        #expect(tail.output.contains("reconnect"), "\(tail.output)")
        try await client.close()
    }
}
