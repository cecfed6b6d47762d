import HeraldPluginAPI
import Synchronization

/// Wakes outbox dispatchers after a commit queued outputs. Each dispatcher has its own
/// ``Subscription``, so a notification that arrives while it is busy is remembered for its next wait;
/// many notifications coalesce into one wake-up. Dispatchers also re-check on a timer, so a missed
/// wake-up could only cost latency, never delivery.
public final class OutboxSignal: Sendable {
    /// One dispatcher's view of the signal.
    public struct Subscription: Sendable {
        fileprivate let waiters: WaiterList

        /// Returns when outputs arrived since the last wait, or `timeout` passes.
        public func wait(timeout: Duration) async { await waiters.wait(timeout: timeout) }

        /// Ends the current (or next) wait early, e.g. at shutdown.
        public func wake() { waiters.pulse() }
    }

    private let subscribers = Mutex<[WaiterList]>([])

    /// Creates a signal.
    public init() {}

    /// Registers a dispatcher.
    public func subscribe() -> Subscription {
        let waiters = WaiterList()
        subscribers.withLock { $0.append(waiters) }
        return Subscription(waiters: waiters)
    }

    /// New outputs exist.
    public func notify() {
        subscribers.withLock { $0 }.forEach { $0.pulse() }
    }
}
