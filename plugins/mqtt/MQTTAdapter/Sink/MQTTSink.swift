import HeraldPluginAPI
import Logging
import Mosquitto
import Synchronization

/// Publishes outputs to per-user topics at QoS 1 and confirms each only when the broker's PUBACK
/// arrives. Badges are retained so a client that subscribes later sees its current count at once.
public final class MQTTSink: SinkAdapter {
    /// Instance name.
    public let name: String
    /// Output kinds this sink publishes.
    public let accepts: Set<OutputKind>
    let options: MosquittoOptions
    let topics: [OutputKind: TopicTemplate]
    let retainBadges: Bool
    let ackTimeout: Duration
    let properties: [OutputKind: MosquittoPublishProperties]
    private let tracker = PublishTracker()
    private let loop = Mutex<MQTTConnectionLoop?>(nil)
    private let connected = ConnectionFlag()

    init(name: String, accepts: Set<OutputKind>, options: MosquittoOptions, topics: [OutputKind: TopicTemplate],
         retainBadges: Bool, ackTimeout: Duration, properties: [OutputKind: MosquittoPublishProperties] = [:]) {
        self.properties = properties
        self.name = name
        self.accepts = accepts
        self.options = options
        self.topics = topics
        self.retainBadges = retainBadges
        self.ackTimeout = ackTimeout
    }

    /// Keeps the broker connection until shutdown.
    public func run(context: SinkContext) async throws {
        let tracker = tracker
        let connected = connected
        let hooks = MQTTConnectionLoop.Hooks(
            onPublish: { tracker.acknowledge(messageID: $0, reason: $1) },
            onConnectionChange: { isUp in
                connected.set(isUp)
                if !isUp { tracker.abandon() }
            })
        let made = MQTTConnectionLoop(threadName: "mqtt-out \(name)", options: options, filters: [], hooks: hooks, shutdown: context.shutdown,
                                      logger: context.logger, metrics: nil, maxBurst: 256, reconnect: context.reconnect)
        loop.withLock { $0 = made }
        await made.run()
    }

    /// Publishes the batch in order; returns how many leading outputs the broker acknowledged.
    public func deliver(_ batch: [OutboxEnvelope]) async throws(SinkError) -> Int {
        guard connected.isUp, let client = loop.withLock({ $0 })?.client else {
            throw SinkError("not connected to the broker at \(options.host):\(options.port)")
        }
        tracker.begin(count: batch.count)
        for (index, envelope) in batch.enumerated() {
            let topic = topic(for: envelope)
            do {
                let messageID = try client.publish(topic: topic, payload: envelope.payload, qos: 1,
                                                   retain: retainBadges && envelope.kind == .badge,
                                                   properties: properties[envelope.kind] ?? MosquittoPublishProperties(), wakeLoop: false)
                tracker.register(messageID: messageID, index: index)
            } catch {
                tracker.abandon()
                break
            }
        }
        // One wake for the whole batch: the loop writes every queued publish in one turn.
        client.wake()
        let confirmed = await tracker.waitForConfirmations(timeout: ackTimeout)
        if confirmed < batch.count, let refusal = tracker.refusal(at: confirmed) {
            // The broker answered and said no: a retry cannot succeed unless the refusal is temporary.
            throw SinkError("the broker refused the publish to \(topic(for: batch[confirmed])): \(refusal)",
                            confirmed: confirmed, undeliverable: !Self.temporaryRefusals.contains(refusal.value))
        }
        if confirmed == 0 { throw SinkError("the broker acknowledged none of \(batch.count) publishes") }
        return confirmed
    }

    /// MQTT 5 PUBACK refusals worth retrying: unspecified error, implementation specific, server busy,
    /// quota exceeded. Others (not authorized, topic name invalid, packet too large …) are final.
    static let temporaryRefusals: Set<Int32> = [0x80, 0x83, 0x89, 0x97]

    private func topic(for envelope: OutboxEnvelope) -> String {
        topics[envelope.kind]?.render(filling: envelope.recipient.rawValue) ?? "users/\(envelope.recipient)/\(envelope.kind.rawValue)"
    }
}

/// Whether the sink's connection is up; written on the loop thread, read by `deliver`.
final class ConnectionFlag: Sendable {
    private let state = Atomic<Bool>(false)
    var isUp: Bool { state.load(ordering: .acquiring) }
    func set(_ value: Bool) { state.store(value, ordering: .releasing) }
}
