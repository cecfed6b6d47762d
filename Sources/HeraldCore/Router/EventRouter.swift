public import HeraldPluginAPI
public import Logging
import CoreMetrics

/// The single entry point that changes the chat model.
///
/// For every batch a source commits, the router applies each event to the store and queues the
/// outputs that event produces, all in one transaction (a transactional outbox); rejected inputs go
/// to the dead-letter queue in the same transaction. Badges are queued once per user per commit, the
/// latest last (see ``LatestBadges``). After the commit it wakes the outbox dispatchers.
/// The exhaustive `switch` in ``apply(_:in:)`` is the product's spine: model first, then outputs built
/// from the model as it is after the change.
public final class EventRouter: IngestHandle {
    let store: any ChatStore
    let policy: RouterPolicy
    let routing: OutputRouting
    let clock: any WallClock
    let metrics: RouterMetrics
    let signal: OutboxSignal
    let logger: Logger
    let totals: IngestTotals
    let tap: EventTap?
    private let rejectionLog: RateLimitedLog

    /// Creates a router.
    public init(store: any ChatStore, policy: RouterPolicy, routing: OutputRouting, clock: any WallClock,
                metrics: RouterMetrics, signal: OutboxSignal, logger: Logger, totals: IngestTotals = IngestTotals(),
                tap: EventTap? = nil) {
        self.totals = totals
        self.tap = tap
        self.store = store
        self.policy = policy
        self.routing = routing
        self.clock = clock
        self.metrics = metrics
        self.signal = signal
        self.logger = logger
        self.rejectionLog = RateLimitedLog(intervalMilliseconds: 10_000)
    }

    /// Applies `records` in order and stores `checkpoints`, in one transaction.
    public func commit(_ records: [SourceRecord], checkpoints: [SourceCheckpoint]) throws(IngestError) -> IngestReport {
        guard !records.isEmpty || !checkpoints.isEmpty else { return IngestReport() }
        let started = ContinuousClock.now
        let tapping = tap?.isActive == true
        var tapped: [TailRecord] = []
        var badgesSuperseded = 0
        let report: IngestReport
        do {
            report = try store.write { tx in
                var report = IngestReport()
                var badges = LatestBadges()
                tapped.removeAll()
                for record in records {
                    switch record.outcome {
                    case .event(let event):
                        let effect = try apply(event, in: tx)
                        effect.applied ? (report.applied += 1) : (report.duplicates += 1)
                        if tapping {
                            tapped.append(TailRecord(event: event, provenance: record.provenance, committedAt: record.provenance.receivedAt,
                                                     commitLatencyMilliseconds: 0, applied: effect.applied, outputs: effect.outputs))
                        }
                        for output in effect.outputs {
                            if case .badge(let update) = output {
                                badges.keep(update, queuedAt: record.provenance.receivedAt)
                            } else {
                                report.outputs += try enqueue(output, at: record.provenance.receivedAt, in: tx)
                            }
                        }
                    case .rejected(let rejection):
                        try tx.deadLetter(rejection, provenance: record.provenance, raw: record.raw)
                        report.deadLettered += 1
                    }
                }
                for (update, queuedAt) in badges.latest {
                    report.outputs += try enqueue(.badge(update), at: queuedAt, in: tx)
                }
                badgesSuperseded = badges.superseded
                if !checkpoints.isEmpty {
                    let now = clock.now()
                    for checkpoint in checkpoints { try tx.saveCheckpoint(checkpoint, at: now) }
                }
                return report
            }
        } catch {
            metrics.commitFailures.increment()
            throw IngestError("commit of \(records.count) records failed: \(error)")
        }
        let now = clock.now()
        metrics.recordCommit(records, report: report, duration: ContinuousClock.now - started, committedAt: now)
        metrics.badgesSuperseded.increment(by: badgesSuperseded)
        totals.add(report)
        if !tapped.isEmpty, let tap {
            for index in tapped.indices {
                tapped[index].committedAt = now
                tapped[index].commitLatencyMilliseconds = now.milliseconds - tapped[index].provenance.receivedAt.milliseconds
            }
            tap.publish(tapped)
        }
        logRejections(records)
        if report.outputs > 0 { signal.notify() }
        return report
    }

    /// Queues `output` for every sink that accepts it; returns how many that is.
    private func enqueue(_ output: Output, at time: Timestamp, in tx: any ChatTransaction) throws -> Int {
        let sinks = routing.sinks(for: output)
        try tx.enqueue(output, sinks: sinks, at: time)
        return sinks.count
    }

    /// A source's committed checkpoint.
    public func checkpoint(source: String, key: String) throws(IngestError) -> String? {
        do {
            return try store.checkpoint(source: source, key: key)
        } catch {
            throw IngestError("reading checkpoint \(source)/\(key) failed: \(error)")
        }
    }

    /// Applies one event. Returns whether it changed the model and the outputs it produced.
    func apply(_ event: ChatEvent, in tx: any ChatTransaction) throws -> Effect {
        switch event {
        case .messageReceived(let message): try applyMessageReceived(message, in: tx)
        case .messagesRead(let read): try applyMessagesRead(read, in: tx)
        case .chatCreated(let created): try applyChatCreated(created, in: tx)
        case .chatOpened(let focus): try applyFocus(focus, open: true, in: tx)
        case .chatClosed(let focus): try applyFocus(focus, open: false, in: tx)
        }
    }

    private func logRejections(_ records: [SourceRecord]) {
        for record in records {
            guard case .rejected(let rejection) = record.outcome else { continue }
            if let suppressed = rejectionLog.admit(key: rejection.reason.rawValue, now: clock.now()) {
                logger.warning("Input dead-lettered.", metadata: [
                    "adapter": "\(record.provenance.adapter)", "origin": "\(record.provenance.origin)",
                    "reason": "\(rejection.reason.rawValue)", "detail": "\(rejection.detail)",
                    "suppressed_since_last": "\(suppressed)",
                ])
            }
        }
    }
}

/// What applying one event did.
struct Effect {
    /// `false` for a redelivery or an event that changed nothing it could.
    var applied: Bool
    /// Outputs built from the model after the change.
    var outputs: [Output]

    static let duplicate = Effect(applied: false, outputs: [])
}
