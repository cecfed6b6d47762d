import Foundation
import HeraldTestKit
import Testing

@Suite("Shipped configs pass `herald check`")
struct ShippedConfigTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func check(_ path: String) async throws -> (status: Int32, output: String) {
        let directory = try TemporaryDirectory()
        let child = try ChildProcess(executable: HeraldProcess.binary, arguments: ["check", "--config", path],
                                     logPath: directory.path("check.log"), environment: ["PATH": "/usr/bin:/bin"])
        return (try await child.waitForExit(), child.output)
    }

    @Test(arguments: ["deploy/config/herald.yaml", "plugins/mqtt/sample.yaml", "plugins/exec/sample.yaml",
                      "plugins/rest/sample.yaml", "plugins/websocket/sample.yaml", "plugins/http/sample.yaml"])
    func shippedConfigIsValid(_ relative: String) async throws {
        let result = try await Self.check(Self.root.appendingPathComponent(relative).path)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("OK"))
    }

    /// `deploy/config/herald.yaml` as `make run` starts it, on a test broker and a temporary store: a message
    /// and its reply reach their recipients as notifications, badges and a read receipt.
    @Test func theShippedConfigDeliversNotificationsBadgesAndReceipts() async throws {
        let broker = try await MosquittoBroker()
        let directory = try TemporaryDirectory(prefix: "herald-shipped")
        let shipped = try String(contentsOf: Self.root.appendingPathComponent("deploy/config/herald.yaml"), encoding: .utf8)
        #expect(shipped.contains("listen: 127.0.0.1:9464"))
        let config = try directory.write("herald.yaml", shipped.replacingOccurrences(of: "listen: 127.0.0.1:9464",
                                                                                     with: "listen: 127.0.0.1:\(try Loopback.freePort())"))
        let environment = ["PATH": "/usr/bin:/bin", "HERALD_MQTT_URL": broker.url, "HERALD_STORE": directory.path("herald.sqlite")]
        let herald = try HeraldProcess(configPath: config, logPath: directory.path("herald.log"), environment: environment)
        defer { herald.child.signal(SIGTERM) }
        try await herald.waitUntilConnected(connections: 2)  // the source and the sink
        let observer = try await TestMQTTClient(port: broker.port, subscriptions: ["users/#"])
        let client = try await TestMQTTClient(port: broker.port)

        try client.publish("chats/c1/messages", messageJSON(id: "m1", from: "alice", to: ["bob"], sentAt: 1_000))
        try await observer.waitForMessages("bob's notification and badge") { received in
            received.contains { $0.topic == "users/bob/notifications" && $0.text.contains("\"message_id\":\"m1\"") }
                && received.contains { $0.topic == "users/bob/badge" && $0.text == #"{"chats":{"c1":1},"unread":1}"# }
        }
        // Bob's reply reads the chat up to it: alice gets his receipt, and his badge goes back to zero.
        try client.publish("chats/c1/messages", messageJSON(id: "m2", from: "bob", to: ["alice"], sentAt: 2_000))
        try await observer.waitForMessages("alice's notification, bob's receipt and bob's zero badge") { received in
            received.contains { $0.topic == "users/alice/notifications" && $0.text.contains("\"message_id\":\"m2\"") }
                && received.contains { $0.topic == "users/alice/receipts" && $0.text.contains("\"reader\":\"bob\"") }
                && received.contains { $0.topic == "users/bob/badge" && $0.text == #"{"chats":{},"unread":0}"# }
        }
        let late = try await TestMQTTClient(port: broker.port, subscriptions: ["users/alice/badge"])
        try await late.waitForMessages("alice's retained badge") { $0.contains { $0.retained && $0.text == #"{"chats":{"c1":1},"unread":1}"# } }
        for peer in [observer, client, late] { try await peer.close() }
    }

    @Test func brokenConfigFailsWithExitCode78AndALocation() async throws {
        let directory = try TemporaryDirectory()
        let text = try String(contentsOf: Self.root.appendingPathComponent("deploy/config/herald.yaml"), encoding: .utf8)
        let path = try directory.write("broken.yaml", text.replacingOccurrences(of: "retain_badges:", with: "retain_badge:"))
        let result = try await Self.check(path)
        #expect(result.status == 78)
        #expect(result.output.contains("broken.yaml:") && result.output.contains("sinks[0].retain_badge: unknown key"), "\(result.output)")
    }
}

@Suite("herald adapters and the config's JSON Schema")
struct ConfigurationSchemaTests {
    @Test func theSchemaAcceptsTheShippedConfigsAndRejectsABrokenOne() async throws {
        let directory = try TemporaryDirectory()
        let schema = try ChildProcess(executable: HeraldProcess.binary, arguments: ["adapters", "--json-schema"], logPath: directory.path("schema.json"))
        #expect(try await schema.waitForExit() == 0)
        let root = ShippedConfigTests.root.path
        let fixed = "sources:\n  - name: in\n    type: mqtt\n    url: mqtt://127.0.0.1\n    client_id: x\n    keepalive: 5\n"
        let good = try directory.write("good.yaml", fixed)
        let broken = try directory.write("broken.yaml", fixed.replacingOccurrences(of: "keepalive", with: "keepalve"))
        let twoStores = try directory.write("two-stores.yaml", "store:\n  url: postgres://herald@127.0.0.1/herald\n  cache_mib: 4\n")
        let noURL = try directory.write("no-url.yaml", "store:\n  path: var/herald.sqlite\n  schema: herald\n")
        let script = try directory.write("validate.py", """
            import json, sys, yaml, jsonschema
            schema = json.load(open(sys.argv[1]))
            for path in sys.argv[2:]:
                try:
                    jsonschema.validate(yaml.safe_load(open(path)), schema)
                    print("valid", path.rsplit("/", 1)[-1])
                except jsonschema.ValidationError as error:
                    print("invalid", path.rsplit("/", 1)[-1], error.message)
            """)
        let validate = try ChildProcess(
            executable: "/usr/bin/env",
            arguments: ["python3", script, schema.logPath, "\(root)/deploy/config/herald.yaml", "\(root)/plugins/mqtt/sample.yaml",
                        "\(root)/plugins/exec/sample.yaml", "\(root)/plugins/rest/sample.yaml", "\(root)/plugins/websocket/sample.yaml",
                        "\(root)/plugins/http/sample.yaml",
                        good, twoStores, noURL, broken],
            logPath: directory.path("validate.log"))
        #expect(try await validate.waitForExit() == 0, "\(validate.output)")
        let lines = validate.output.split(separator: "\n").map(String.init)
        #expect(lines.prefix(7) == ["valid herald.yaml", "valid sample.yaml", "valid sample.yaml", "valid sample.yaml", "valid sample.yaml",
                                    "valid sample.yaml", "valid good.yaml"], "\(validate.output)")
        #expect(lines.dropFirst(7).map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
                == ["invalid two-stores.yaml", "invalid no-url.yaml", "invalid broken.yaml"], "\(validate.output)")
    }

    @Test func theConfigurationReferenceIsTheCodesOwn() async throws {
        let directory = try TemporaryDirectory()
        let reference = try ChildProcess(executable: HeraldProcess.binary, arguments: ["adapters", "--markdown"],
                                         logPath: directory.path("configuration.md"))
        #expect(try await reference.waitForExit() == 0)
        let committed = try String(contentsOf: ShippedConfigTests.root.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        #expect(reference.output == committed, "docs/configuration.md differs from `herald adapters --markdown`: run `make docs`")
        for key in ["`cache_mib`", "`subscriptions[].topic`", "`tls.ca_file`", "`type: webhook` (sink)", "`reconnect_budget_s`"] {
            #expect(committed.contains(key), "\(key)")
        }
    }

    @Test func adaptersListsEveryAdapterWithItsOptions() async throws {
        let directory = try TemporaryDirectory()
        let list = try ChildProcess(executable: HeraldProcess.binary, arguments: ["adapters"], logPath: directory.path("adapters.txt"))
        #expect(try await list.waitForExit() == 0)
        for expected in ["type: mqtt", "type: exec", "type: rest", "type: websocket", "type: webhook", "type: http", "max_in_flight", "client_id", "max_unacked",
                         "retain_badges", "id_pointer", "max_attempts"] {
            #expect(list.output.contains(expected), "\(expected)")
        }
    }
}
