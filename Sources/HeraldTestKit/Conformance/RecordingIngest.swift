import HeraldPluginAPI
import Synchronization

/// An ingest handle for conformance runs: keeps every committed record in memory and can be told to
/// fail the next commits (as a full disk would), to check that an adapter then acknowledges nothing.
public final class RecordingIngest: IngestHandle {
    private let state = Mutex<(records: [SourceRecord], failures: Int, failed: Int, checkpoints: [String: String])>(([], 0, 0, [:]))

    /// Creates an empty recorder.
    public init() {}

    /// Commits (records) the batch and its checkpoints, or throws if a failure was requested.
    public func commit(_ records: [SourceRecord], checkpoints: [SourceCheckpoint]) throws(IngestError) -> IngestReport {
        let fail = state.withLock { state -> Bool in
            guard state.failures > 0 else {
                state.records += records
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
            if case .event = record.outcome { report.applied += 1 } else { report.deadLettered += 1 }
        }
        return report
    }

    /// The last committed value of a checkpoint.
    public func checkpoint(source: String, key: String) throws(IngestError) -> String? {
        state.withLock { $0.checkpoints["\(source)/\(key)"] }
    }

    /// Makes the next `count` commits fail.
    public func failNextCommits(_ count: Int) { state.withLock { $0.failures = count } }

    /// Commits that failed on purpose so far.
    public var failedCommits: Int { state.withLock { $0.failed } }

    /// Everything committed so far.
    public var records: [SourceRecord] { state.withLock { $0.records } }
}
