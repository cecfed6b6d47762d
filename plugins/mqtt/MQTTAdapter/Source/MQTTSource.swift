import HeraldPluginAPI
import Logging
import Mosquitto

/// The MQTT source: a persistent QoS 1 session whose PUBACKs leave only after the messages they
/// acknowledge are committed (group commit per read burst).
///
/// Delivery guarantee: a message the broker considers delivered is in the store or the dead-letter
/// queue. libmosquitto runs in its threaded state, so a PUBACK is queued during the read and written
/// by the loop's write step, which runs only once every burst read so far is committed and durable
/// (``IngestHandle/commitDeferringDurability(_:checkpoints:)`` and its wait: the next burst is read while
/// one commits, and committed while the last is synced; see ``MQTTConnectionLoop``). A crash between
/// the two leaves the message unacknowledged; the broker redelivers it and the store's idempotency
/// (chat, message id) makes the redelivery a no-op.
public struct MQTTSource: SourceAdapter {
    /// Instance name.
    public let name: String
    let options: MosquittoOptions
    let normaliser: MQTTTopicNormaliser
    let maxBatch: Int
    /// Under a steady load, the shortest time between the starts of two commits (``CommitPacing``).
    let commitInterval: Duration
    /// MQTT shared subscription group: each filter is subscribed as `$share/GROUP/filter`, so the broker
    /// spreads the messages over every instance in the group.
    let shareGroup: String?

    /// The filters subscribed to (shared when a group is set).
    var filters: [String] {
        normaliser.filters.map { filter in shareGroup.map { "$share/\($0)/\(filter)" } ?? filter }
    }

    /// Runs until shutdown.
    public func run(context: SourceContext) async throws {
        let batch = BatchBuffer(capacity: maxBatch)
        let normaliser = normaliser
        let ingest = context.ingest
        let metrics = context.metrics
        let clock = context.clock
        let health = context.health
        let hooks = MQTTConnectionLoop.Hooks(
            onMessage: { message in
                metrics.received.increment()
                metrics.bytes.increment(by: message.payload.count)
                batch.records.append(normaliser.normalise(topic: message.topic, payload: message.payload, receivedAt: clock.now(),
                                                          attributes: MQTTTopicNormaliser.attributes(of: message)))
            },
            onConnectionChange: { health.report(connected: $0, at: clock.now()) },
            onProblem: { health.report(problem: $0) },
            takeBurst: {
                guard !batch.records.isEmpty else { return nil }
                let records = batch.take()
                return { try ingest.commitDeferringDurability(records, checkpoints: []).durability }
            })
        if options.tls?.insecure == true {
            context.logger.warning("TLS host name verification is OFF for this MQTT source. Use only in development.")
        }
        context.logger.info("MQTT source starting.", metadata: [
            "broker": "\(options.host):\(options.port)", "filters": "\(filters.joined(separator: ", "))",
        ])
        let loop = MQTTConnectionLoop(threadName: "mqtt-in \(name)", options: options, filters: filters, hooks: hooks, shutdown: context.shutdown,
                                      logger: context.logger, metrics: metrics, maxBurst: maxBatch, commitInterval: commitInterval,
                                      reconnect: context.reconnect)
        await loop.run()
        context.logger.info("MQTT source stopped.")
    }
}
