public import HeraldPluginAPI
import Synchronization

/// Running totals of everything the router committed, for progress lines and summaries.
public final class IngestTotals: Sendable {
    private let state = Mutex(IngestReport())

    /// Creates zeroed totals.
    public init() {}

    /// Adds one commit's report.
    public func add(_ report: IngestReport) {
        state.withLock {
            $0.applied += report.applied
            $0.duplicates += report.duplicates
            $0.deadLettered += report.deadLettered
            $0.outputs += report.outputs
        }
    }

    /// The totals so far.
    public func snapshot() -> IngestReport { state.withLock { $0 } }
}
