/// A one-way flag the runtime raises when an adapter should stop (graceful shutdown).
/// Adapters running their own threads poll ``isTriggered``; async code awaits ``wait()``.
public final class ShutdownSignal: Sendable {
    private let waiters = WaiterList()

    /// Creates an untriggered signal.
    public init() {}

    /// Whether shutdown has begun.
    public var isTriggered: Bool { waiters.isLatched }

    /// Raises the flag and wakes every waiter. Later calls do nothing new.
    public func trigger() { waiters.latch() }

    /// Returns once the flag is raised (or the task is cancelled).
    public func wait() async { await waiters.wait() }

    /// Returns once the flag is raised or `timeout` passes.
    public func wait(timeout: Duration) async { await waiters.wait(timeout: timeout) }
}
