import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Logging
import MetricsTestKit
import Mosquitto
import MQTTAdapter
import Testing

/// MQTT 5 on the source and the sink, against a real mosquitto.
@Suite("MQTT 5")
struct MQTT5Tests {
    static func sourceYAML(_ broker: MosquittoBroker, clientID: String, extra: String = "") -> String {
        """
        sources:
          - name: mqtt5
            type: mqtt
            url: \(broker.url)
            client_id: \(clientID)
            protocol: 5
            keepalive: 5
        \(extra)
        """
    }

    @Test func theSourcePassesTheConformanceKitOverMQTT5() async throws {
        let fixtures = try ConformanceFixture.load(from: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures"))
        let broker = try await MosquittoBroker()
        let failures = try await SourceConformance.check(MQTTConformanceSubject(broker: broker, protocolVersion: .v5), fixtures: fixtures, adapter: "conformance")
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func aShareGroupSpreadsMessagesOverTwoSourcesAndEachArrivesOnce() async throws {
        let broker = try await MosquittoBroker()
        let group = "    share_group: herald"
        let first = try RunningSource(yaml: Self.sourceYAML(broker, clientID: "share-a", extra: group))
        let second = try RunningSource(yaml: Self.sourceYAML(broker, clientID: "share-b", extra: group))
        try await eventually("both sources to connect") { first.context.health.snapshot.connected && second.context.health.snapshot.connected }
        // The SUBACKs have arrived once no problem is pending; a subscription made after a publish would miss it.
        try await eventually("both subscriptions") {
            try await Self.publishUntilBothHaveOne(broker: broker, first: first, second: second)
        }
        let publisher = try await TestMQTTClient(port: broker.port)
        for index in 0..<200 {
            try publisher.publish("chats/c\(index % 7)/messages", #"{"id":"m\#(index)","from":"alice","body":"hi","sent_at":1000}"#)
        }
        try await publisher.waitForAcknowledgements(200)
        try await publisher.close()
        try await eventually("every message at one source or the other") {
            Set(first.messageIDs + second.messageIDs).isSuperset(of: (0..<200).map { "m\($0)" })
        }
        let all = (first.messageIDs + second.messageIDs).filter { !$0.hasPrefix("probe") }
        #expect(all.count == 200, "a message reached both members of the group")
        #expect(first.messageIDs.contains { !$0.hasPrefix("probe") } && second.messageIDs.contains { !$0.hasPrefix("probe") },
                "the broker gave every message to one member: \(first.messageIDs.count) and \(second.messageIDs.count)")
        await first.stop()
        await second.stop()
    }

    /// Publishes probes until each source has received one (both subscriptions are in place).
    static func publishUntilBothHaveOne(broker: MosquittoBroker, first: RunningSource, second: RunningSource) async throws -> Bool {
        let publisher = try await TestMQTTClient(port: broker.port)
        try publisher.publish("chats/probe/messages", #"{"id":"probe\#(UUID().uuidString)","from":"alice","body":"p","sent_at":1}"#)
        try await publisher.waitForAcknowledgements(1)
        try await publisher.close()
        return !first.messageIDs.isEmpty && !second.messageIDs.isEmpty
    }

    @Test func userPropertiesAndContentTypeTravelInProvenanceOnly() async throws {
        let broker = try await MosquittoBroker()
        let source = try RunningSource(yaml: Self.sourceYAML(broker, clientID: "props"))
        try await eventually("the source to connect") { source.context.health.snapshot.connected }
        let payload = #"{"id":"m1","from":"alice","body":"hi","sent_at":1000}"#
        try await eventually("the message with its properties", timeout: .seconds(30)) {
            try await Self.mosquittoPublish(port: broker.port, topic: "chats/c1/messages", payload: payload, properties: [
                "publish user-property trace abc-123", "publish user-property trace def", "publish content-type application/json",
            ])
            return !source.messageIDs.isEmpty
        }
        let record = try #require(source.ingest.records.first)
        #expect(record.provenance.attributes == [
            "content_type": "application/json", "user_property.trace": "abc-123,def",
        ])
        guard case .event(.messageReceived(let message)) = record.outcome else {
            Issue.record("expected a message, got \(record.outcome)")
            return
        }
        #expect(message.chat == ChatID("c1") && message.sender == UserID("alice"))
        await source.stop()
    }

    @Test func aRefusedSubscriptionIsAProblemWithTheBrokersReason() async throws {
        // mosquitto's acl_file is checked on delivery only; the dynamic security plugin refuses at SUBSCRIBE.
        let directory = try TemporaryDirectory(prefix: "dynsec")
        let rules = try directory.write("dynsec.json", """
            {"clients": [], "groups": [{"groupname": "anonymous", "roles": [{"rolename": "reader"}]}], "anonymousGroup": "anonymous",
             "roles": [{"rolename": "reader", "acls": [{"acltype": "subscribePattern", "topic": "chats/#", "allow": true}]}],
             "defaultACLAccess": {"publishClientSend": true, "publishClientReceive": true, "subscribe": false, "unsubscribe": true}}
            """)
        let broker = try await MosquittoBroker(extraConfig: try Self.dynamicSecurity(rules))
        let source = try RunningSource(yaml: Self.sourceYAML(broker, clientID: "refused"))
        try await eventually("the refusal to be reported") { source.context.health.snapshot.problem != nil }
        let problem = try #require(source.context.health.snapshot.problem)
        #expect(problem.contains("users/+/read") && problem.contains("0x87 Not authorized"), "\(problem)")
        #expect(!problem.contains("chats/+/messages"), "a granted subscription is reported refused: \(problem)")
        await source.stop()
    }

    @Test func theSinkSendsContentTypeAndTreatsAnUnauthorisedPublishAsUndeliverable() async throws {
        let directory = try TemporaryDirectory(prefix: "dynsec")
        let rules = try directory.write("dynsec.json", """
            {"clients": [], "groups": [{"groupname": "anonymous", "roles": [{"rolename": "sink"}]}], "anonymousGroup": "anonymous",
             "roles": [{"rolename": "sink", "acls": [{"acltype": "publishClientSend", "topic": "users/mallory/#", "allow": false}]}],
             "defaultACLAccess": {"publishClientSend": true, "publishClientReceive": true, "subscribe": true, "unsubscribe": true}}
            """)
        let broker = try await MosquittoBroker(extraConfig: try Self.dynamicSecurity(rules))
        let subscriber = try await TestMQTTClient(port: broker.port, subscriptions: ["users/#"], protocolVersion: .v5)
        let yaml = """
            sinks:
              - name: out
                type: mqtt
                url: \(broker.url)
                client_id: sink5
                protocol: 5
                message_expiry_s: {notification: 3600}
            """
        let configuration = try ConfigurationLoader(registry: NormaliserTests.registry, environment: [:]).load(text: yaml, file: "sink.yaml")
        let sink = try configuration.sinks[0].settings.makeSink(name: "out")
        let shutdown = ShutdownSignal()
        let running = Task { try await sink.run(context: SinkContext(logger: Logger(label: "sink") { _ in SwiftLogNoOpLogHandler() }, shutdown: shutdown)) }
        defer { shutdown.trigger(); running.cancel() }
        func envelope(_ sequence: Int64, _ user: String) -> OutboxEnvelope {
            OutboxEnvelope(sequence: sequence, recipient: UserID(user), kind: .notification, payload: Array(#"{"n":\#(sequence)}"#.utf8),
                           createdAt: Timestamp(milliseconds: 1), attempts: 0)
        }
        var delivered = 0
        try await eventually("the sink to connect and deliver") {
            delivered = (try? await sink.deliver([envelope(1, "bob")])) ?? 0
            return delivered == 1
        }
        try await subscriber.waitForMessages("bob's notification") { $0.contains { $0.topic == "users/bob/notifications" } }
        #expect(subscriber.received.first { $0.topic == "users/bob/notifications" }?.contentType == "application/json")
        do {
            _ = try await sink.deliver([envelope(2, "carol"), envelope(3, "mallory"), envelope(4, "dave")])
            Issue.record("the refused publish was confirmed")
        } catch {
            #expect(error.confirmed == 1 && error.undeliverable, "\(error)")
            #expect(error.description.contains("0x87 Not authorized") && error.description.contains("users/mallory/notifications"),
                    "\(error)")
        }
        try await subscriber.close()
    }

    /// Broker config lines that load mosquitto's dynamic security plugin with `rules`.
    static func dynamicSecurity(_ rules: String) throws -> String {
        let candidates = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"].map { "\($0)/mosquitto_dynamic_security.so" }
        guard let plugin = candidates.first(where: FileManager.default.fileExists(atPath:)) else {
            throw TestKitError("mosquitto_dynamic_security.so is missing; install the mosquitto package")
        }
        return "plugin \(plugin)\nplugin_opt_config_file \(rules)"
    }

    /// `mosquitto_pub` speaking MQTT 5 with `-D` properties.
    static func mosquittoPublish(port: Int, topic: String, payload: String, properties: [String]) async throws {
        var arguments = ["-V", "mqttv5", "-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-t", topic, "-m", payload]
        for property in properties { arguments += ["-D"] + property.split(separator: " ").map(String.init) }
        try await Command.run("/usr/bin/mosquitto_pub", arguments)
    }
}
