import HeraldPluginAPI
public import Metrics
public import CoreMetrics
import Synchronization

/// The router's metrics: per adapter normalised / dead-lettered / duplicate counts, commit batch
/// sizes and latencies, outputs queued. Created from an injected factory (no global bootstrap).
public final class RouterMetrics: Sendable {
    private let factory: any MetricsFactory
    private let perAdapter = Mutex<[String: AdapterCounters]>([:])
    /// Records per committed batch.
    public let batchSize: Recorder
    /// Commit latency.
    public let commitDuration: Metrics.Timer
    /// Per batch, how long its first record waited from receipt to commit: what reading, batching and
    /// committing add to an event's latency.
    public let ingestLag: Metrics.Timer
    /// Outputs queued in the outbox.
    public let outputsQueued: Counter
    /// Failed commits (nothing of the batch was stored).
    public let commitFailures: Counter
    /// Statements per commit sent to a database server (PostgreSQL): a small constant, whatever the
    /// batch's size.
    public let statementsPerCommit: Recorder
    /// Badge outputs not queued because a later badge of the same user in the same commit replaced them.
    public let badgesSuperseded: Counter
    /// Read receipts not queued because a later receipt of the same reader to the same sender in the same
    /// chat, in the same commit, replaced them.
    public let receiptsSuperseded: Counter

    /// Creates the metrics.
    public init(factory: any MetricsFactory) {
        self.factory = factory
        batchSize = Recorder(label: "herald_commit_batch_size", factory: factory)
        commitDuration = Metrics.Timer(label: "herald_commit_duration_seconds", factory: factory)
        ingestLag = Metrics.Timer(label: "herald_ingest_lag_seconds", factory: factory)
        outputsQueued = Counter(label: "herald_outputs_queued_total", factory: factory)
        commitFailures = Counter(label: "herald_commit_failures_total", factory: factory)
        badgesSuperseded = Counter(label: "herald_badges_superseded_total", factory: factory)
        receiptsSuperseded = Counter(label: "herald_receipts_superseded_total", factory: factory)
        statementsPerCommit = Recorder(label: "herald_store_statements_per_commit", factory: factory)
    }

    struct AdapterCounters: Sendable {
        let normalised: Counter
        let deadLettered: Counter
        let duplicates: Counter
    }

    private func counters(for adapter: String) -> AdapterCounters {
        perAdapter.withLock { table in
            if let existing = table[adapter] { return existing }
            let dimensions = [("adapter", adapter)]
            let made = AdapterCounters(
                normalised: Counter(label: "herald_events_normalised_total", dimensions: dimensions, factory: factory),
                deadLettered: Counter(label: "herald_events_dead_lettered_total", dimensions: dimensions, factory: factory),
                duplicates: Counter(label: "herald_events_duplicate_total", dimensions: dimensions, factory: factory))
            table[adapter] = made
            return made
        }
    }

    /// Records a commit and what it dead-lettered.
    func recordCommit(_ records: [SourceRecord], report: IngestReport, deadLetters: [NewDeadLetter], duration: Duration, committedAt: Timestamp) {
        batchSize.record(records.count)
        commitDuration.recordNanoseconds(duration.nanoseconds)
        if let first = records.first {
            ingestLag.recordMilliseconds(max(0, committedAt.milliseconds - first.provenance.receivedAt.milliseconds))
        }
        outputsQueued.increment(by: report.outputs)
        // Attribute to adapters. A batch normally comes from one adapter, so a short list searched from its
        // last entry finds it at once (records of one adapter share its name's storage, and equal storage
        // compares without reading the bytes); a dictionary would hash the name for every record.
        var byAdapter: [(adapter: String, events: Int, rejected: Int)] = []
        func tally(_ adapter: String) -> Int {
            if let index = byAdapter.lastIndex(where: { $0.adapter == adapter }) { return index }
            byAdapter.append((adapter, 0, 0))
            return byAdapter.count - 1
        }
        for index in records.indices {
            if case .event = records[index].outcome { byAdapter[tally(records[index].provenance.adapter)].events += 1 }
        }
        for letter in deadLetters { byAdapter[tally(letter.provenance.adapter)].rejected += 1 }
        for (adapter, events, rejected) in byAdapter {
            let counters = counters(for: adapter)
            counters.normalised.increment(by: events)
            counters.deadLettered.increment(by: rejected)
        }
        if report.duplicates > 0, let adapter = records.first?.provenance.adapter {
            counters(for: adapter).duplicates.increment(by: report.duplicates)
        }
    }
}
