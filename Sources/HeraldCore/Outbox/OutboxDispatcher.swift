public import HeraldPluginAPI
public import Logging
public import CoreMetrics
import Foundation
import Metrics
public import ServiceLifecycle

/// Delivers one sink's outbox entries in order, at least once, retrying with jittered backoff while
/// the sink is down. With a ``Lease`` (instances sharing a PostgreSQL store), only the instance that
/// holds the sink's lease delivers, so one recipient's outputs leave in order from one place; the
/// others stand by and one of them takes over within the lease's TTL when the holder dies. Entries leave the outbox only when the sink confirms them, so they survive
/// restarts. On graceful shutdown it keeps flushing until the outbox is empty or the drain deadline
/// passes; whatever is left is delivered after the next start.
///
/// With several writers, each badge in a batch is rebuilt from the counters at delivery
/// (``refreshingBadges(_:from:)``), so the last one a user gets counts every commit.
///
/// The store is read and written through ``BlockingCalls``. When the store fails (a PostgreSQL server
/// that is down), the dispatcher logs it at a limited rate, waits with jittered backoff and goes on
/// where it was: a store outage never stops the gateway.
public final class OutboxDispatcher: Service, CustomStringConvertible {
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
    let blocking: BlockingCalls
    let storeFailures: Counter
    /// The lease on this sink's delivery when instances share the store, or `nil` to always deliver.
    let lease: Lease?
    /// How long delivered entries may stay in the outbox before they are removed.
    let purgeInterval: Duration
    private let storeFailureLog = RateLimitedLog(intervalMilliseconds: 10_000)

    /// Creates a dispatcher for `sink`. Delivered entries leave the outbox at most every `purgeInterval`,
    /// and at the latest that long after delivery caught up.
    public init(sink: any SinkAdapter, store: any ChatStore, signal: OutboxSignal, logger: Logger,
                metrics: any MetricsFactory, clock: any WallClock = SystemClock(), blocking: BlockingCalls = BlockingCalls(),
                batchSize: Int = 256, drainTimeout: Duration = .seconds(5), lease: Lease? = nil,
                purgeInterval: Duration = .milliseconds(250)) {
        self.lease = lease
        self.purgeInterval = purgeInterval
        self.blocking = blocking
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
        storeFailures = Counter(label: "herald_outbox_store_failures_total", dimensions: dimensions, factory: metrics)
    }

    /// How the service lifecycle's log lines name it.
    public var description: String { "outbox dispatcher for sink \(sink.name)" }

    /// Delivers until graceful shutdown, then drains.
    public func run() async throws {
        let shutdown = ShutdownSignal()
        let subscription = subscription
        await withGracefulShutdownHandler {
            var backoff = Backoff(baseSeconds: 0.2, capSeconds: 15)
            var position = DeliveryPosition()
            while !Task.isCancelled {
                do {
                    try await deliverLoop(shutdown: shutdown, position: &position)
                    break
                } catch {
                    if position.storeAnswered { backoff.reset() }
                    position.storeAnswered = false
                    storeFailures.increment()
                    let delay = backoff.nextDelaySeconds()
                    if let suppressed = storeFailureLog.admit(key: "store", now: clock.now()) {
                        logger.error("Outbox: the store failed; delivery resumes when it answers.", metadata: [
                            "sink": "\(sink.name)", "error": "\(error)", "retry_in_s": "\(String(format: "%.2f", delay))",
                            "suppressed": "\(suppressed)",
                        ])
                    }
                    if shutdown.isTriggered { break }
                    await shutdown.wait(timeout: .milliseconds(Int64(delay * 1000)))
                }
            }
            await lease?.release()
        } onGracefulShutdown: {
            shutdown.trigger()
            subscription.wake()
        }
    }

    /// How far delivery got: where the next read starts and what the sink confirmed that is still in
    /// the outbox. Kept across store failures, so delivery goes on where it was.
    struct DeliveryPosition {
        /// The next read takes entries above this sequence.
        var cursor: Int64 = 0
        /// Confirmed by the sink, not yet removed from the outbox (ascending).
        var unpurged: [Int64] = []
        /// When the oldest of ``unpurged`` was confirmed.
        var unpurgedSince: ContinuousClock.Instant?
        /// The store answered since the last failure (the next failure starts the backoff over).
        var storeAnswered = false
    }

    private func deliverLoop(shutdown: ShutdownSignal, position: inout DeliveryPosition) async throws {
        var backoff = Backoff(baseSeconds: 0.1, capSeconds: 15)
        var drainDeadline: ContinuousClock.Instant?
        // A read that returned fewer entries than it asked for saw the whole outbox: every commit after it
        // pulses the signal, so the dispatcher waits for that instead of reading again to find nothing.
        var caughtUp = false
        // A delivered entry is purged once it has waited `purgeInterval`, with the others delivered by
        // then, so the dispatcher does not take the store's writer (and an fsync) for every batch, nor at
        // every pause of a steady load. After a crash the unpurged tail is delivered again: at least once,
        // as promised. With several writers an entry may commit below the cursor after the entries above it
        // were read, so after a purge, and whenever it runs dry with nothing to purge, the next read starts
        // from the beginning; with one writer it reads on (`outboxFollowsCommitOrder`).
        let store = store, sinkName = sink.name, blocking = blocking
        let rewinds = !store.outboxFollowsCommitOrder
        func purge() async throws {
            guard !position.unpurged.isEmpty else { return }
            let delivered = position.unpurged
            try await blocking.run { try store.removeOutputs(sink: sinkName, delivered: delivered) }
            position.unpurged = []
            position.unpurgedSince = nil
            if rewinds { position.cursor = 0 }
        }
        while !Task.isCancelled {
            if shutdown.isTriggered, drainDeadline == nil { drainDeadline = .now + drainTimeout }
            if let drainDeadline, ContinuousClock.now >= drainDeadline {
                logger.warning("Outbox not fully drained before shutdown; the rest is delivered after restart.",
                               metadata: ["sink": "\(sink.name)"])
                try await purge()
                return
            }
            if let lease {
                let status = try await lease.check()
                position.storeAnswered = true
                guard status.held else {
                    // Another instance delivers this sink; check again within a third of the lease's life.
                    try await purge()
                    if drainDeadline != nil { return }
                    await shutdown.wait(timeout: lease.ttl / 3)
                    continue
                }
                if status.acquired {
                    position.cursor = 0
                    logger.info("Outbox: this instance delivers the sink now.", metadata: ["sink": "\(sink.name)", "lease": "\(lease.name)"])
                }
            }
            let after = position.cursor, limit = batchSize, skipsRead = caughtUp && drainDeadline == nil
            caughtUp = false
            let batch: [OutboxEnvelope] = skipsRead ? [] : try await blocking.run { () throws -> [OutboxEnvelope] in
                let read = try store.pendingOutputs(sink: sinkName, after: after, limit: limit)
                return rewinds ? try Self.refreshingBadges(read, from: store) : read
            }
            position.storeAnswered = true
            if batch.isEmpty {
                if drainDeadline == nil, let since = position.unpurgedSince, ContinuousClock.now - since < purgeInterval {
                    // Caught up, with delivered entries younger than the interval: new outputs go first.
                    await subscription.wait(timeout: purgeInterval - (ContinuousClock.now - since))
                    continue
                }
                try await purge()
                if rewinds { position.cursor = 0 }  // an entry that committed below the cursor meanwhile is read next time
                if drainDeadline != nil { return }
                await subscription.wait(timeout: .seconds(1))
                continue
            }
            var failure: SinkError
            do throws(SinkError) {
                let count = try await deliverWithinDrain(batch, shutdown: shutdown)
                confirm(batch.prefix(count), position: &position)
                failure = SinkError("\(batch.count - count) of \(batch.count) outputs unconfirmed", confirmed: count)
            } catch {
                let confirmed = min(max(error.confirmed, 0), batch.count)
                confirm(batch.prefix(confirmed), position: &position)
                failure = error
                failure.confirmed = confirmed
            }
            guard failure.confirmed < batch.count else {
                backoff.reset()
                if let since = position.unpurgedSince, ContinuousClock.now - since >= purgeInterval { try await purge() }
                caughtUp = batch.count < limit
                continue
            }
            let head = batch[failure.confirmed]
            try await purge()
            if failure.undeliverable {
                let rejection = Rejection(.undeliverable, failure.description), now = clock.now()
                try await blocking.run { try store.deadLetterOutput(head, sink: sinkName, rejection: rejection, at: now) }
                position.cursor = max(position.cursor, head.sequence)
                deadLetteredTotal.increment()
                logger.error("Output dead-lettered: the sink cannot deliver it.", metadata: [
                    "sink": "\(sink.name)", "sequence": "\(head.sequence)", "kind": "\(head.kind.rawValue)",
                    "recipient": "\(head.recipient)", "error": "\(failure)", "attempts": "\(head.attempts + 1)",
                ])
                continue
            }
            failedTotal.increment()
            try await blocking.run { try store.recordFailedAttempt(sink: sinkName, sequences: [head.sequence]) }
            let delay = failure.retryAfterSeconds ?? backoff.nextDelaySeconds()
            logger.warning("Sink delivery failed; retrying.", metadata: [
                "sink": "\(sink.name)", "error": "\(failure)", "retry_in_s": "\(String(format: "%.2f", delay))",
            ])
            if drainDeadline != nil {
                try await purge()
                return
            }
            await shutdown.wait(timeout: .milliseconds(Int64(delay * 1000)))
        }
        try await purge()
    }

    /// Records what the sink confirmed: the cursor moves past it and it waits for the next purge.
    private func confirm(_ confirmed: ArraySlice<OutboxEnvelope>, position: inout DeliveryPosition) {
        guard let last = confirmed.last else { return }
        if position.unpurged.isEmpty { position.unpurgedSince = .now }
        position.unpurged.append(contentsOf: confirmed.map(\.sequence))
        position.cursor = last.sequence
        deliveredTotal.increment(by: confirmed.count)
    }
}
