public import HeraldPluginAPI
import Synchronization

/// Whether the router's commits are failing, and why: readiness reports it, since a store can take an
/// empty probe transaction while every real commit fails (a full disk, a table that is too large).
public final class CommitHealth: Sendable {
    /// Commits have failed since `since`, the last one with `reason`.
    public struct Failure: Sendable, Hashable {
        /// When the first failure of this run of failures happened.
        public var since: Timestamp
        /// The last failure, in one line.
        public var reason: String
    }

    private let state = Mutex<Failure?>(nil)

    /// Starts healthy.
    public init() {}

    /// A commit failed.
    public func recordFailure(_ reason: String, at now: Timestamp) {
        state.withLock { $0 = Failure(since: $0?.since ?? now, reason: reason) }
    }

    /// A commit succeeded: the failures are over.
    public func recordSuccess() {
        state.withLock { if $0 != nil { $0 = nil } }
    }

    /// The failures going on, or `nil`.
    public var failure: Failure? { state.withLock { $0 } }
}
