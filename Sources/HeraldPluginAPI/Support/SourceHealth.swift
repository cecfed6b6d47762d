import Synchronization

/// A source's connection state, reported by the adapter and read by the readiness check.
public final class SourceHealth: Sendable {
    /// The state at a moment.
    public struct Snapshot: Sendable, Hashable {
        /// Whether the upstream connection is up.
        public var connected: Bool
        /// When the state last changed.
        public var since: Timestamp
        /// What keeps the source from working while connected (e.g. a subscription the broker refused),
        /// or `nil`. Readiness fails at once while a problem is reported.
        public var problem: String? = nil
        /// The source runs once per deployment and another instance runs it now: this one stands by,
        /// which is not a reason to be unready.
        public var standby = false
    }

    private let state: Mutex<Snapshot>

    /// Starts disconnected as of `now`.
    public init(now: Timestamp) { state = Mutex(Snapshot(connected: false, since: now)) }

    /// Reports a change (repeated reports of the same state keep the original `since`).
    public func report(connected: Bool, at now: Timestamp) {
        state.withLock {
            if $0.connected != connected { $0 = Snapshot(connected: connected, since: now, problem: $0.problem, standby: $0.standby) }
        }
    }

    /// Reports whether the source stands by while another instance runs it.
    public func report(standby: Bool, at now: Timestamp) {
        state.withLock {
            if $0.standby != standby { $0 = Snapshot(connected: false, since: now, problem: nil, standby: standby) }
        }
    }

    /// Reports a problem the connection state does not show, or clears it with `nil`.
    public func report(problem: String?) {
        state.withLock { $0.problem = problem }
    }

    /// The current state.
    public var snapshot: Snapshot { state.withLock { $0 } }
}
