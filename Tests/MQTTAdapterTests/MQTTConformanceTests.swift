import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Mosquitto
import MQTTAdapter
import Testing

/// The MQTT source passes the conformance kit against a real mosquitto.
struct MQTTConformanceSubject: SourceConformanceSubject {
    let broker: MosquittoBroker
    /// The protocol of the source and of the publishing client.
    var protocolVersion: MosquittoOptions.ProtocolVersion = .v311

    func makeSource() throws -> any SourceAdapter {
        let version = protocolVersion == .v5 ? "5" : "3.1.1"
        let yaml = "sources:\n  - name: conformance\n    type: mqtt\n    url: \(broker.url)\n    client_id: conformance-\(broker.port)\n"
            + "    keepalive: 5\n    protocol: \"\(version)\"\n"
        let configuration = try ConfigurationLoader(registry: NormaliserTests.registry, environment: [:]).load(text: yaml, file: "conformance")
        return try configuration.sources[0].settings.makeSource(name: "conformance")
    }

    /// Publishes at QoS 1 with a fresh client and waits for the broker's PUBACK.
    func deliver(_ input: [UInt8], origin: String) async throws {
        let publisher = try await TestMQTTClient(port: broker.port, protocolVersion: protocolVersion)
        try publisher.publish(origin, bytes: input)
        try await publisher.waitForAcknowledgements(1)
        try await publisher.close()
    }

    func interruptUpstream() async throws {
        try await broker.stop()
        try await broker.start()
    }
}

@Suite("MQTT source conformance", .serialized)
struct MQTTConformanceTests {
    @Test func theMQTTSourcePassesTheConformanceKit() async throws {
        let fixtures = try ConformanceFixture.load(from: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures"))
        #expect(fixtures.count == 6)
        let broker = try await MosquittoBroker()
        let failures = try await SourceConformance.check(MQTTConformanceSubject(broker: broker), fixtures: fixtures, adapter: "conformance")
        #expect(failures.isEmpty, "\(failures)")
    }
}
