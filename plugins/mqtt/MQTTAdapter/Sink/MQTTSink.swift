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
    private let tracker = PublishTracker()
    private let loop = Mutex<MQTTConnectionLoop?>(nil)
    private let connected = ConnectionFlag()

    init(name: String, accepts: Set<OutputKind>, options: MosquittoOptions, topics: [OutputKind: TopicTemplate],
         retainBadges: Bool, ackTimeout: Duration) {
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
            onPublish: { tracker.acknowledge(messageID: $0) },
            onConnectionChange: { isUp in
                connected.set(isUp)
                if !isUp { tracker.abandon() }
            })
        let made = MQTTConnectionLoop(options: options, filters: [], hooks: hooks, shutdown: context.shutdown,
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
            let topic = topics[envelope.kind]?.render(filling: envelope.recipient.rawValue)
                ?? "users/\(envelope.recipient)/\(envelope.kind.rawValue)"
            do {
                let messageID = try client.publish(topic: topic, payload: envelope.payload, qos: 1,
                                                   retain: retainBadges && envelope.kind == .badge, wakeLoop: false)
                tracker.register(messageID: messageID, index: index)
            } catch {
                tracker.abandon()
                break
            }
        }
        // One wake for the whole batch: the loop writes every queued publish in one turn.
        client.wake()
        let confirmed = await tracker.waitForConfirmations(timeout: ackTimeout)
        if confirmed == 0 { throw SinkError("the broker acknowledged none of \(batch.count) publishes") }
        return confirmed
    }
}

/// Whether the sink's connection is up; written on the loop thread, read by `deliver`.
final class ConnectionFlag: Sendable {
    private let state = Atomic<Bool>(false)
    var isUp: Bool { state.load(ordering: .acquiring) }
    func set(_ value: Bool) { state.store(value, ordering: .releasing) }
}
