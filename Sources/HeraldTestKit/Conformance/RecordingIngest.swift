import Dispatch
import HeraldPluginAPI
import Synchronization

/// An ingest handle for conformance runs: keeps every committed record in memory and can be told to
/// fail the next commits (as a full disk would), to check that an adapter then acknowledges nothing,
/// or to hold the next commit (as a slow disk would), to check what an adapter does meanwhile.
public final class RecordingIngest: IngestHandle {
    private let state = Mutex<(records: [SourceRecord], failures: Int, failed: Int, checkpoints: [String: String], sizes: [Int])>(
        ([], 0, 0, [:], []))
    private let hold = Mutex<(requested: Bool, waiting: Bool)>((false, false))
    private let release = DispatchSemaphore(value: 0)
    private let durabilityFailures = Mutex(0)

    /// Creates an empty recorder.
    public init() {}

    /// Commits (records) the batch and its checkpoints, or throws if a failure was requested.
    public func commit(_ records: [SourceRecord], checkpoints: [SourceCheckpoint]) throws(IngestError) -> IngestReport {
        let held = hold.withLock { hold -> Bool in
            guard hold.requested else { return false }
            hold = (false, true)
            return true
        }
        if held {
            release.wait()
            hold.withLock { $0.waiting = false }
        }
        let fail = state.withLock { state -> Bool in
            guard state.failures > 0 else {
                state.records += records
                state.sizes.append(records.count)
                for checkpoint in checkpoints { state.checkpoints["\(checkpoint.source)/\(checkpoint.key)"] = checkpoint.value }
                return false
            }
            state.failures -= 1
            state.failed += 1
            return true
        }
        if fail { throw IngestError("commit failed on purpose (conformance check)") }
        var report = IngestReport()
        for record in records {
            if case .event = record.outcome {
                report.applied += 1
                report.outcomes.append(.applied)
            } else {
                report.deadLettered += 1
                report.outcomes.append(.deadLettered)
            }
        }
        return report
    }

    /// Commits with ``commit(_:checkpoints:)``; its durability fails if ``failNextDurabilities(_:)`` asked
    /// for it (as a disk whose sync fails after the transaction would), else it is durable already.
    public func commitDeferringDurability(_ records: [SourceRecord], checkpoints: [SourceCheckpoint])
        throws(IngestError) -> (report: IngestReport, durability: CommitDurability) {
        let report = try commit(records, checkpoints: checkpoints)
        let fail = durabilityFailures.withLock { failures -> Bool in
            guard failures > 0 else { return false }
            failures -= 1
            return true
        }
        return (report, fail ? CommitDurability { throw IngestError("sync failed on purpose (conformance check)") } : .durable)
    }

    /// Makes the durability of the next `count` commits through
    /// ``commitDeferringDurability(_:checkpoints:)`` fail, after their records are recorded.
    public func failNextDurabilities(_ count: Int) { durabilityFailures.withLock { $0 = count } }

    /// The last committed value of a checkpoint.
    public func checkpoint(source: String, key: String) throws(IngestError) -> String? {
        state.withLock { $0.checkpoints["\(source)/\(key)"] }
    }

    /// Makes the next `count` commits fail.
    public func failNextCommits(_ count: Int) { state.withLock { $0.failures = count } }

    /// Makes the next commit wait (on the committing thread) until ``releaseHeldCommit()``; it then
    /// fails or records as it would have.
    public func holdNextCommit() { hold.withLock { $0.requested = true } }

    /// Whether a held commit has started and is waiting for ``releaseHeldCommit()``.
    public var isHoldingCommit: Bool { hold.withLock { $0.waiting } }

    /// Lets the held commit go on.
    public func releaseHeldCommit() { release.signal() }

    /// Commits that failed on purpose so far.
    public var failedCommits: Int { state.withLock { $0.failed } }

    /// How many records each successful commit held, in commit order.
    public var commitSizes: [Int] { state.withLock { $0.sizes } }

    /// Everything committed so far.
    public var records: [SourceRecord] { state.withLock { $0.records } }
}
