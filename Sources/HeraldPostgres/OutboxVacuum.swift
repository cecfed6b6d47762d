public import HeraldCore
import HeraldPluginAPI
import Logging
import Metrics
public import CoreMetrics
public import ServiceLifecycle

/// Vacuums the PostgreSQL outbox once the dispatchers have delivered ``threshold`` outputs since the last
/// time, checking every ``interval``.
///
/// The outbox is a queue: every pack of outputs is a row written and deleted within moments. Its deleted
/// rows stay in the table's index until a vacuum, and a dispatcher that reads a sink's packs from the start
/// (which it does after each purge, as several writers may commit below what it read) walks over every one
/// of them. Autovacuum visits a database at most once a minute (`autovacuum_naptime`); with a row per output,
/// a gateway queueing 16,000 outputs a second (2,000 messages a second to 5-member groups) left about a
/// million by then: each read took milliseconds, delivery fell behind and notifications waited half a
/// minute. Vacuuming the outbox alone takes milliseconds and keeps the reads short.
///
/// It needs the table's owner (the role that created the schema) or a superuser; otherwise it logs once
/// and leaves the outbox to autovacuum.
public struct OutboxVacuum: Service, CustomStringConvertible {
    let store: PostgresChatStore
    let interval: Duration
    let threshold: Int
    let blocking: BlockingCalls
    let logger: Logger
    let clock: any WallClock
    let vacuums: Counter
    let duration: Metrics.Timer
    /// A failure is logged at most every ten seconds (a database outage fails every check).
    private let failureLog = RateLimitedLog(intervalMilliseconds: 10_000)

    /// Creates the service for `store`.
    public init(store: PostgresChatStore, interval: Duration = .seconds(1), threshold: Int = 10_000,
                blocking: BlockingCalls = BlockingCalls(label: "herald-outbox-vacuum"), clock: any WallClock = SystemClock(),
                logger: Logger, metrics: any MetricsFactory) {
        self.store = store
        self.clock = clock
        self.interval = interval
        self.threshold = threshold
        self.blocking = blocking
        self.logger = logger
        vacuums = Counter(label: "herald_outbox_vacuums_total", factory: metrics)
        duration = Metrics.Timer(label: "herald_outbox_vacuum_duration_seconds", factory: metrics)
    }

    /// How the service lifecycle's log lines name it.
    public var description: String { "outbox vacuum (after \(threshold) delivered outputs)" }

    /// Vacuums as entries are removed, until shutdown.
    public func run() async throws {
        var permitted: Bool?
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            guard !Task.isShuttingDownGracefully, store.outboxEntriesRemovedSinceVacuum >= threshold else { continue }
            do {
                if permitted == nil {
                    let store = store
                    permitted = try await blocking.run { try store.mayVacuumOutbox() }
                    if permitted == false {
                        logger.notice("The store's role does not own the outbox table; autovacuum alone keeps it.")
                    }
                }
                guard permitted == true else { continue }
                _ = try await vacuumOnce()
            } catch {
                if let suppressed = failureLog.admit(key: "vacuum", now: clock.now()) {
                    logger.warning("Vacuuming the outbox failed; will retry.", metadata: [
                        "error": "\(error)", "suppressed_since_last": "\(suppressed)"])
                }
            }
        }
    }

    /// Vacuums the outbox if ``threshold`` entries were removed since the last time; returns whether it did.
    @discardableResult
    public func vacuumOnce() async throws -> Bool {
        let removed = store.outboxEntriesRemovedSinceVacuum
        guard removed >= threshold else { return false }
        let store = store, start = ContinuousClock.now
        try await blocking.run { try store.vacuumOutbox() }
        let took = ContinuousClock.now - start
        vacuums.increment()
        duration.recordNanoseconds(took.nanoseconds)
        logger.debug("Vacuumed the outbox.", metadata: ["removed_entries": "\(removed)", "duration_ms": "\(Double(took.nanoseconds) / 1_000_000)"])
        return true
    }
}
