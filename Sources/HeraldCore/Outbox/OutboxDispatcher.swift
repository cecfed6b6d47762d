public import HeraldPluginAPI
public import Logging
public import CoreMetrics
import Foundation
import Metrics
public import ServiceLifecycle

/// Delivers one sink's outbox entries in order, at least once, retrying with jittered backoff while
/// the sink is down. Entries leave the outbox only when the sink confirms them, so they survive
/// restarts. On graceful shutdown it keeps flushing until the outbox is empty or the drain deadline
/// passes; whatever is left is delivered after the next start.
public final class OutboxDispatcher: Service {
    let sink: any SinkAdapter
    let store: any ChatStore
    let subscription: OutboxSignal.Subscription
    let logger: Logger
    let batchSize: Int
    let drainTimeout: Duration
    let deliveredTotal: Counter
    let failedTotal: Counter
    let deadLetteredTotal: Counter
    let clock: any WallClock

    /// Creates a dispatcher for `sink`.
    public init(sink: any SinkAdapter, store: any ChatStore, signal: OutboxSignal, logger: Logger,
                metrics: any MetricsFactory, clock: any WallClock = SystemClock(), batchSize: Int = 256,
                drainTimeout: Duration = .seconds(5)) {
        self.clock = clock
        self.sink = sink
        self.store = store
        self.subscription = signal.subscribe()
        self.logger = logger
        self.batchSize = batchSize
        self.drainTimeout = drainTimeout
        let dimensions = [("sink", sink.name)]
        deliveredTotal = Counter(label: "herald_sink_delivered_total", dimensions: dimensions, factory: metrics)
        failedTotal = Counter(label: "herald_sink_failed_total", dimensions: dimensions, factory: metrics)
        deadLetteredTotal = Counter(label: "herald_sink_dead_lettered_total", dimensions: dimensions, factory: metrics)
    }

    /// Delivers until graceful shutdown, then drains.
    public func run() async throws {
        let shutdown = ShutdownSignal()
        let subscription = subscription
        try await withGracefulShutdownHandler {
            try await deliverLoop(shutdown: shutdown)
        } onGracefulShutdown: {
            shutdown.trigger()
            subscription.wake()
        }
    }

    private func deliverLoop(shutdown: ShutdownSignal) async throws {
        var backoff = Backoff(baseSeconds: 0.1, capSeconds: 15)
        var drainDeadline: ContinuousClock.Instant?
        // Delivered entries are purged in ranges, at most every `purgeInterval` or when idle, so the
        // dispatcher does not take the store's single writer (and an fsync) for every batch. After a
        // crash the unpurged tail is delivered again: at least once, as promised.
        var delivered: Int64 = 0
        var purged: Int64 = 0
        var lastPurge = ContinuousClock.now
        func purge() throws {
            guard delivered > purged else { return }
            try store.removeOutputs(sink: sink.name, through: delivered)
            purged = delivered
            lastPurge = .now
        }
        defer { try? purge() }
        while !Task.isCancelled {
            if shutdown.isTriggered, drainDeadline == nil { drainDeadline = .now + drainTimeout }
            if let drainDeadline, ContinuousClock.now >= drainDeadline {
                logger.warning("Outbox not fully drained before shutdown; the rest is delivered after restart.",
                               metadata: ["sink": "\(sink.name)"])
                return
            }
            let batch = try store.pendingOutputs(sink: sink.name, after: delivered, limit: batchSize)
            if batch.isEmpty {
                try purge()
                if drainDeadline != nil { return }
                await subscription.wait(timeout: .seconds(1))
                continue
            }
            var failure: SinkError
            do throws(SinkError) {
                let count = try await sink.deliver(batch)
                if count > 0 { delivered = batch[count - 1].sequence }
                deliveredTotal.increment(by: count)
                failure = SinkError("\(batch.count - count) of \(batch.count) outputs unconfirmed", confirmed: count)
            } catch {
                let confirmed = min(max(error.confirmed, 0), batch.count)
                if confirmed > 0 { delivered = batch[confirmed - 1].sequence }
                deliveredTotal.increment(by: confirmed)
                failure = error
                failure.confirmed = confirmed
            }
            guard failure.confirmed < batch.count else {
                backoff.reset()
                if ContinuousClock.now - lastPurge > .milliseconds(250) { try purge() }
                continue
            }
            let head = batch[failure.confirmed]
            try purge()
            if failure.undeliverable {
                try store.deadLetterOutput(head, sink: sink.name, rejection: Rejection(.undeliverable, failure.description), at: clock.now())
                delivered = head.sequence
                purged = max(purged, delivered)
                deadLetteredTotal.increment()
                logger.error("Output dead-lettered: the sink cannot deliver it.", metadata: [
                    "sink": "\(sink.name)", "sequence": "\(head.sequence)", "kind": "\(head.kind.rawValue)",
                    "recipient": "\(head.recipient)", "error": "\(failure)", "attempts": "\(head.attempts + 1)",
                ])
                continue
            }
            failedTotal.increment()
            try store.recordFailedAttempt(sink: sink.name, sequences: [head.sequence])
            let delay = failure.retryAfterSeconds ?? backoff.nextDelaySeconds()
            logger.warning("Sink delivery failed; retrying.", metadata: [
                "sink": "\(sink.name)", "error": "\(failure)", "retry_in_s": "\(String(format: "%.2f", delay))",
            ])
            if drainDeadline != nil { return }
            await shutdown.wait(timeout: .milliseconds(Int64(delay * 1000)))
        }
    }
}
