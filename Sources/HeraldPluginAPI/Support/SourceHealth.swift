import Synchronization

/// A source's connection state, reported by the adapter and read by the readiness check.
public final class SourceHealth: Sendable {
    /// The state at a moment.
    public struct Snapshot: Sendable, Hashable {
        /// Whether the upstream connection is up.
        public var connected: Bool
        /// When the state last changed.
        public var since: Timestamp
    }

    private let state: Mutex<Snapshot>

    /// Starts disconnected as of `now`.
    public init(now: Timestamp) { state = Mutex(Snapshot(connected: false, since: now)) }

    /// Reports a change (repeated reports of the same state keep the original `since`).
    public func report(connected: Bool, at now: Timestamp) {
        state.withLock { if $0.connected != connected { $0 = Snapshot(connected: connected, since: now) } }
    }

    /// The current state.
    public var snapshot: Snapshot { state.withLock { $0 } }
}
