/// What a source hands to Herald for one input: an event, or the reason it could not become one.
public struct SourceRecord: Sendable {
    /// The outcome of normalising one input.
    public enum Outcome: Sendable, Hashable {
        /// The input became this event.
        case event(ChatEvent)
        /// The input was rejected; it goes to the dead-letter queue.
        case rejected(Rejection)
    }

    /// Where and when it came in.
    public var provenance: Provenance
    /// The event or the rejection.
    public var outcome: Outcome
    /// The raw bytes; kept for the dead-letter queue (sources may leave it empty for accepted events).
    public var raw: [UInt8]

    /// Creates a record.
    public init(provenance: Provenance, outcome: Outcome, raw: [UInt8]) {
        self.provenance = provenance
        self.outcome = outcome
        self.raw = raw
    }
}

/// What one committed batch did.
public struct IngestReport: Sendable, Hashable {
    /// Events that changed the store.
    public var applied = 0
    /// Events that were already applied (redeliveries): no effect.
    public var duplicates = 0
    /// Records written to the dead-letter queue.
    public var deadLettered = 0
    /// Outputs queued in the outbox.
    public var outputs = 0
    /// What became of each record, in the order committed; empty when the handle does not say (sources
    /// that answer a client per item, such as the HTTP source, read it).
    public var outcomes: [RecordOutcome] = []

    /// What became of one committed record.
    public enum RecordOutcome: Sendable, Hashable {
        /// The event changed the store.
        case applied
        /// The event was applied before (a redelivery): no effect.
        case duplicate
        /// The record went to the dead-letter queue.
        case deadLettered
    }

    /// An empty report.
    public init() {}
}

/// A commit failed: nothing of the batch is stored, so nothing may be acknowledged upstream.
public struct IngestError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, from the store.
    public var description: String

    /// Creates the error.
    public init(_ description: String) { self.description = description }
}

/// The handle a source commits through. Herald's router applies each batch to the store in one
/// transaction together with the outputs it produces.
///
/// Requirements for callers (source adapters):
/// - Acknowledge upstream only **after** `commit` returns: then every record is in the store or the
///   dead-letter queue. If it throws, acknowledge nothing; the upstream must redeliver.
/// - Keep batches bounded (hundreds to a few thousand records).
/// - A source that resumes by position (stream event ids, page cursors) passes the new position as a
///   ``SourceCheckpoint`` with the records it covers, and reads it back with ``checkpoint(source:key:)``
///   when it (re)connects.
/// - `commit` blocks the calling thread until the transaction is durable. Call it from the adapter's
///   own thread, or through ``AsyncIngest`` from async code.
///
/// Requirements for implementations: records and checkpoints commit together or not at all; a batch
/// with no records but checkpoints still stores the checkpoints.
public protocol IngestHandle: Sendable {
    /// Applies `records` in order and stores `checkpoints`, in one transaction.
    func commit(_ records: [SourceRecord], checkpoints: [SourceCheckpoint]) throws(IngestError) -> IngestReport
    /// The committed value of a checkpoint, or `nil` if none was stored.
    func checkpoint(source: String, key: String) throws(IngestError) -> String?
    /// Commits like ``commit(_:checkpoints:)``, but may return before the transaction is durable: the
    /// caller acknowledges upstream only once the returned ``CommitDurability/wait()`` has returned, and
    /// may commit its next batch meanwhile. Commits are durable in the order they returned.
    ///
    /// The default commits with ``commit(_:checkpoints:)`` and returns ``CommitDurability/durable``.
    func commitDeferringDurability(_ records: [SourceRecord], checkpoints: [SourceCheckpoint])
        throws(IngestError) -> (report: IngestReport, durability: CommitDurability)
}

extension IngestHandle {
    /// Commits with ``commit(_:checkpoints:)``: durable on return.
    public func commitDeferringDurability(_ records: [SourceRecord], checkpoints: [SourceCheckpoint])
        throws(IngestError) -> (report: IngestReport, durability: CommitDurability) {
        (try commit(records, checkpoints: checkpoints), .durable)
    }

    /// Applies `records` in order in one transaction (no checkpoint).
    public func commit(_ records: [SourceRecord]) throws(IngestError) -> IngestReport {
        try commit(records, checkpoints: [])
    }
}
