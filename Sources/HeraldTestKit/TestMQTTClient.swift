import Foundation
import HeraldPluginAPI
import Mosquitto
import Synchronization

/// A real libmosquitto client for tests and benchmarks: publishes at QoS 1 and counts the broker's
/// acknowledgements, and records what arrives on its subscriptions. Runs its own network thread.
public final class TestMQTTClient: Sendable {
    /// A received message.
    public struct Received: Sendable, Hashable {
        /// Topic.
        public var topic: String
        /// Payload as text.
        public var text: String
        /// Whether it was delivered as retained.
        public var retained: Bool
        /// MQTT 5 content type, if the publisher set one.
        public var contentType: String? = nil
    }

    private let client: MosquittoClient
    private let acknowledged = Atomic<Int>(0)
    private let connected = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    private let inbox = Mutex<[Received]>([])
    private let finished = Mutex<Bool>(false)
    private let onMessageHook: (@Sendable (Received) -> Void)?

    /// Connects to `port` on 127.0.0.1 and subscribes to `subscriptions` at QoS 1.
    /// With `cleanSession: false` the broker keeps the subscriptions and queues QoS 1 messages while
    /// the client is away.
    public init(port: Int, clientID: String = "test-\(UUID().uuidString.prefix(8))", cleanSession: Bool = true,
                subscriptions: [String] = [], maxInflight: Int = 100, protocolVersion: MosquittoOptions.ProtocolVersion = .v311,
                onMessage: (@Sendable (Received) -> Void)? = nil) async throws {
        var options = MosquittoOptions(host: "127.0.0.1", port: port, clientID: clientID, cleanSession: cleanSession, keepalive: 30)
        options.maxInflight = maxInflight
        options.protocolVersion = protocolVersion
        onMessageHook = onMessage
        let box = CallbackTarget()
        client = try MosquittoClient(options: options, callbacks: MosquittoCallbacks(
            onConnect: { code, _ in box.target?.didConnect(code: code, subscriptions: subscriptions) },
            onMessage: { box.target?.didReceive($0) },
            onPublish: { _, _ in box.target?.didAcknowledge() }))
        box.target = self
        try client.connect()
        NamedThread.start(named: "test-mqtt") { [self] in
            try? client.serviceLoop { stopping.load(ordering: .relaxed) }
            client.disconnect()
            finished.withLock { $0 = true }
        }
        try await eventually("test client to connect to \(port)", timeout: .seconds(60)) { connected.load(ordering: .acquiring) }
    }

    private func didConnect(code: MosquittoReasonCode, subscriptions: [String]) {
        guard code.isSuccess else { return }
        for filter in subscriptions { _ = try? client.subscribe(filter, qos: 1) }
        connected.store(true, ordering: .releasing)
    }

    private func didReceive(_ message: MosquittoMessage) {
        let received = Received(topic: message.topic, text: String(decoding: message.payload, as: UTF8.self), retained: message.retain,
                                contentType: message.contentType)
        inbox.withLock { $0.append(received) }
        onMessageHook?(received)
    }

    private func didAcknowledge() { acknowledged.add(1, ordering: .relaxed) }

    /// Publishes at QoS 1 (queued; the network thread sends it).
    public func publish(_ topic: String, _ text: String, retain: Bool = false) throws {
        try client.publish(topic: topic, payload: Array(text.utf8), qos: 1, retain: retain)
    }

    /// Publishes raw bytes at QoS 1.
    public func publish(_ topic: String, bytes: [UInt8]) throws {
        try client.publish(topic: topic, payload: bytes, qos: 1, retain: false)
    }

    /// How many publishes the broker has acknowledged.
    public var acknowledgedCount: Int { acknowledged.load(ordering: .relaxed) }

    /// Waits until `count` publishes are acknowledged.
    public func waitForAcknowledgements(_ count: Int, timeout: Duration = .seconds(60)) async throws {
        try await eventually("\(count) PUBACKs (have \(acknowledgedCount))", timeout: timeout) { acknowledgedCount >= count }
    }

    /// Everything received so far.
    public var received: [Received] { inbox.withLock { $0 } }

    /// Waits until the received messages satisfy `condition`.
    public func waitForMessages(_ what: String, timeout: Duration = .seconds(30), _ condition: @escaping ([Received]) -> Bool) async throws {
        try await eventually(what, timeout: timeout) { condition(received) }
    }

    /// Disconnects and stops the network thread.
    public func close() async throws {
        stopping.store(true, ordering: .relaxed)
        client.wake()
        try await eventually("test client to stop", timeout: .seconds(30)) { finished.withLock { $0 } }
    }
}

/// Lets callbacks created before `self` exists reach it.
private final class CallbackTarget: @unchecked Sendable {
    weak var target: TestMQTTClient?
}
