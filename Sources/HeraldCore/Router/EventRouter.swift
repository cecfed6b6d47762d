public import HeraldPluginAPI
public import Logging
import CoreMetrics
import Synchronization
import Dispatch

/// The single entry point that changes the chat model.
///
/// For every batch a source commits, the router loads the state slice the batch touches
/// (``BatchPlan``), applies the events to it in memory (``BatchApplier``, a pure transform whose
/// exhaustive `switch` is the product's spine: model first, then outputs built from the model after
/// the change), and writes the difference, the outputs (a transactional outbox) and the rejected
/// inputs (the dead-letter queue) in one transaction. Badges are queued once per user per commit, the
/// latest last (see ``LatestBadges``), and read receipts once per reader, sender and chat, the latest
/// where it was queued (see ``LatestReceipts``). After the commit it wakes the outbox dispatchers.
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
    /// Whether commits are failing, for readiness.
    public let commitHealth: CommitHealth
    private let rejectionLog: RateLimitedLog
    /// Outbox rows per 1,000 records queued in the last large batch (``reservingBatch``), the receipts it
    /// removed again included (``LatestReceipts``). The next large batch's outbox is reserved from it:
    /// grown by doubling instead, the array that holds most of a commit's memory ends with up to twice the
    /// room it needs, after a copy that briefly holds both.
    let outboxRowsPerThousandRecords = Atomic<Int>(0)
    /// Where large batches are applied while the store inserts their messages (``concurrentApplyMessages``).
    let applyQueue = DispatchQueue(label: "herald-router-apply")

    /// Creates a router.
    public init(store: any ChatStore, policy: RouterPolicy, routing: OutputRouting, clock: any WallClock,
                metrics: RouterMetrics, signal: OutboxSignal, logger: Logger, totals: IngestTotals = IngestTotals(),
                tap: EventTap? = nil, commitHealth: CommitHealth = CommitHealth()) {
        self.commitHealth = commitHealth
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

    /// Applies `records` in order and stores `checkpoints`, in one transaction, durable on return.
    public func commit(_ records: [SourceRecord], checkpoints: [SourceCheckpoint]) throws(IngestError) -> IngestReport {
        try commit(records, checkpoints: checkpoints, deferringDurability: false).report
    }

    /// Applies `records` and stores `checkpoints` in one transaction, and returns once it is committed:
    /// the store makes it durable while the next one runs (``ChatStore/writeDeferringDurability(_:)``).
    public func commitDeferringDurability(_ records: [SourceRecord], checkpoints: [SourceCheckpoint])
        throws(IngestError) -> (report: IngestReport, durability: CommitDurability) {
        try commit(records, checkpoints: checkpoints, deferringDurability: true)
    }

    private func commit(_ records: [SourceRecord], checkpoints: [SourceCheckpoint], deferringDurability: Bool)
        throws(IngestError) -> (report: IngestReport, durability: CommitDurability) {
        guard !records.isEmpty || !checkpoints.isEmpty else { return (IngestReport(), .durable) }
        let started = ContinuousClock.now
        let tapping = tap?.isActive == true
        var batch = AppliedBatch()
        var durability = CommitDurability.durable
        var attempt = 0
        while true {
            attempt += 1
            do {
                let body = { (tx: any ChatTransaction) throws -> AppliedBatch in
                    try self.applyBatch(records, checkpoints: checkpoints, tapping: tapping, in: tx)
                }
                if deferringDurability {
                    (batch, durability) = try store.writeDeferringDurability(body)
                } else {
                    batch = try store.write(body)
                }
                break
            } catch let conflict as StoreConflict where attempt < Self.conflictAttempts {
                logger.debug("Batch met a concurrent write; applying it again.", metadata: ["conflict": "\(conflict)"])
            } catch {
                throw Self.failedCommit(of: records.count, error, metrics: metrics, health: commitHealth, clock: clock)
            }
        }
        commitHealth.recordSuccess()
        let report = batch.report
        let now = clock.now()
        let duration = ContinuousClock.now - started
        let statements = store.statementsInLastWrite
        metrics.recordCommit(records, report: report, deadLetters: batch.deadLetters, duration: duration, committedAt: now)
        if let statements { metrics.statementsPerCommit.record(statements) }
        logger.debug("Committed a batch.", metadata: [
            "records": "\(records.count)", "outputs": "\(report.outputs)", "attempts": "\(attempt)",
            "duration_ms": "\(Double(duration.nanoseconds) / 1_000_000)", "statements": "\(statements.map(String.init) ?? "in process")",
        ])
        metrics.badgesSuperseded.increment(by: batch.badgesSuperseded)
        metrics.receiptsSuperseded.increment(by: batch.receiptsSuperseded)
        totals.add(report)
        if !batch.tapped.isEmpty, let tap {
            for index in batch.tapped.indices {
                batch.tapped[index].committedAt = now
                batch.tapped[index].commitLatencyMilliseconds = now.milliseconds - batch.tapped[index].provenance.receivedAt.milliseconds
            }
            tap.publish(batch.tapped)
        }
        logRejections(batch.deadLetters)
        if report.outputs > 0 { signal.notify() }
        return (report, deferringDurability ? failingVisibly(durability, records: records.count) : durability)
    }

    /// `durability`, counted as a failed commit (metrics, readiness) when it fails.
    private func failingVisibly(_ durability: CommitDurability, records: Int) -> CommitDurability {
        CommitDurability { [metrics, commitHealth, clock] in
            do {
                try durability.wait()
            } catch {
                throw Self.failedCommit(of: records, error, metrics: metrics, health: commitHealth, clock: clock)
            }
        }
    }

    /// Counts a commit of `records` records that failed with `error`, reports it to readiness, and returns
    /// the error a source sees.
    private static func failedCommit(of records: Int, _ error: any Error, metrics: RouterMetrics, health: CommitHealth,
                                     clock: any WallClock) -> IngestError {
        metrics.commitFailures.increment()
        health.recordFailure("\(error)", at: clock.now())
        return IngestError("commit of \(records) records failed: \(error)")
    }

    /// Batches of at least this many records reserve their outbox from the estimate and teach it. Smaller
    /// ones grow theirs as they go: their arrays are small, and a few records of another shape (a read, a
    /// message to a large group) from another source must not size the next large batch.
    static let reservingBatch = 1000

    /// How often a batch is applied when another writer keeps changing what it touches.
    static let conflictAttempts = 5

    /// A batch that stores at least this many new messages is applied on ``applyQueue`` while a store that
    /// writes its messages ahead (``MessagesAhead/written``) inserts them; a smaller one is applied on the
    /// transaction's thread and written whole, where handing it over would cost more than it saves.
    static let concurrentApplyMessages = 256

    /// One batch inside a transaction: load its slice (a few set-based reads), apply its events in
    /// memory (``transform(_:slice:now:messages:checkpoints:tapping:)``), write the difference. The batch's
    /// new messages are known from the slice, so a store may take them while the batch is applied
    /// (``MessagesAhead``): a server as a statement sent ahead, SQLite on this thread while the apply runs on
    /// ``applyQueue``.
    private func applyBatch(_ records: [SourceRecord], checkpoints: [SourceCheckpoint], tapping: Bool,
                            in tx: any ChatTransaction) throws -> AppliedBatch {
        var events: [ChatEvent] = []
        events.reserveCapacity(records.count)
        var messages = 0
        for index in records.indices {
            guard case .event(let event) = records[index].outcome else { continue }
            if case .messageReceived = event { messages += 1 }
            events.append(event)
        }
        let plan = BatchPlan(events: events)
        var slice = StateSlice()
        if !events.isEmpty {
            slice = try tx.loadSlice(plan.keys)
            try tx.loadCounters(users: plan.users(in: slice), ranges: plan.ranges(in: slice), into: &slice)
        }

        let now = clock.now()
        let transform = { @Sendable [self, slice, messages] in
            try self.transform(records, slice: slice, now: now, messages: messages, checkpoints: checkpoints, tapping: tapping)
        }
        let (batch, delta): (AppliedBatch, StoreDelta)
        switch events.isEmpty ? .withTheDelta : tx.messagesAhead {
        case .withTheDelta:
            (batch, delta) = try transform()
        case .sent:
            // The server stores them while the batch is applied here: the same list the delta will carry.
            try tx.storeMessagesAhead(plan.newMessages(in: slice, receivedAt: now))
            (batch, delta) = try transform()
        case .written:
            guard messages >= Self.concurrentApplyMessages else {
                (batch, delta) = try transform()
                break
            }
            // The batch is applied on the apply queue while this thread, the transaction's, inserts its messages.
            let applying = BackgroundWork.start(on: applyQueue, transform)
            do {
                try tx.storeMessagesAhead(plan.newMessages(in: slice, receivedAt: now))
            } catch {
                _ = try? applying.result()
                throw error
            }
            (batch, delta) = try applying.result()
        }
        try tx.write(delta)
        return batch
    }

    /// Queues `output` for every sink that accepts it: the last sink's row takes `output` itself, so with
    /// one sink for its kind (the shipped config) the output is not copied again.
    func enqueue(_ output: consuming Output, at time: Timestamp, into outbox: inout [OutboxRow]) {
        let sinks = routing.sinks(for: output)
        guard let last = sinks.last else { return }
        for sink in sinks.dropLast() { outbox.append(OutboxRow(sink: sink, output: copy output, createdAt: time)) }
        outbox.append(OutboxRow(sink: last, output: output, createdAt: time))
    }

    /// A source's committed checkpoint.
    public func checkpoint(source: String, key: String) throws(IngestError) -> String? {
        do {
            return try store.checkpoint(source: source, key: key)
        } catch {
            throw IngestError("reading checkpoint \(source)/\(key) failed: \(error)")
        }
    }

    private func logRejections(_ letters: [NewDeadLetter]) {
        for letter in letters {
            let provenance = letter.provenance, rejection = letter.rejection
            if let suppressed = rejectionLog.admit(key: rejection.reason.rawValue, now: clock.now()) {
                logger.warning("Input dead-lettered.", metadata: [
                    "adapter": "\(provenance.adapter)", "origin": "\(provenance.origin)",
                    "reason": "\(rejection.reason.rawValue)", "detail": "\(rejection.detail)",
                    "suppressed_since_last": "\(suppressed)",
                ])
            }
        }
    }
}

/// What one batch's transaction produced for the router to report after the commit.
struct AppliedBatch: Sendable {
    var report = IngestReport()
    var tapped: [TailRecord] = []
    var badgesSuperseded = 0
    var receiptsSuperseded = 0
    /// What the commit dead-lettered: inputs a source rejected and events the model refused.
    var deadLetters: [NewDeadLetter] = []
}
