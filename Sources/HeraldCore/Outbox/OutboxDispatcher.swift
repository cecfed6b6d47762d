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

    /// Creates a dispatcher for `sink`.
    public init(sink: any SinkAdapter, store: any ChatStore, signal: OutboxSignal, logger: Logger,
                metrics: any MetricsFactory, batchSize: Int = 256, drainTimeout: Duration = .seconds(5)) {
        self.sink = sink
        self.store = store
        self.subscription = signal.subscribe()
        self.logger = logger
        self.batchSize = batchSize
        self.drainTimeout = drainTimeout
        let dimensions = [("sink", sink.name)]
        deliveredTotal = Counter(label: "herald_sink_delivered_total", dimensions: dimensions, factory: metrics)
        failedTotal = Counter(label: "herald_sink_failed_total", dimensions: dimensions, factory: metrics)
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
            do {
                let count = try await sink.deliver(batch)
                if count > 0 { delivered = batch[count - 1].sequence }
                deliveredTotal.increment(by: count)
                if ContinuousClock.now - lastPurge > .milliseconds(250) { try purge() }
                if count == batch.count { backoff.reset(); continue }
                throw SinkError("\(batch.count - count) of \(batch.count) outputs unconfirmed")
            } catch let error as SinkError {
                failedTotal.increment()
                try purge()
                try store.recordFailedAttempt(sink: sink.name, sequences: [batch[0].sequence])
                let delay = error.retryAfterSeconds ?? backoff.nextDelaySeconds()
                logger.warning("Sink delivery failed; retrying.", metadata: [
                    "sink": "\(sink.name)", "error": "\(error)", "retry_in_s": "\(String(format: "%.2f", delay))",
                ])
                if drainDeadline != nil { return }
                await shutdown.wait(timeout: .milliseconds(Int64(delay * 1000)))
            }
        }
    }
}
