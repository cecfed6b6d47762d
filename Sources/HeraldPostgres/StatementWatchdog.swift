import HeraldPluginAPI
import NIOCore
import PostgresNIO
import Synchronization

/// Closes a connection whose statement has gone unanswered for longer than `limit`, so a server that
/// hangs with its sockets open (a network partition, a frozen host) fails the statement instead of
/// holding the pipeline.
///
/// One check repeats on the connection's event loop for as long as the connection lives, and a
/// statement only stores its start time. A timer per statement would cost two wake-ups of the event
/// loop per statement (arming it and cancelling it from the committing thread), on the path every
/// commit takes five times.
final class StatementWatchdog: Sendable {
    /// How long a statement may go unanswered.
    let limit: Duration
    private let state: State
    private let check: RepeatedTask

    /// Starts watching `connection`: every eighth of `limit` (at least 10 ms, at most 1 s) the check
    /// closes it if a statement has been outstanding longer than `limit`.
    init(watching connection: PostgresConnection, limit: Duration) {
        let state = State()
        let nanoseconds = limit.nanoseconds
        let interval = TimeAmount.nanoseconds(min(max(nanoseconds / 8, 10_000_000), 1_000_000_000))
        let loop = connection.eventLoop
        let task = loop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { [connection] task in
            let since = state.outstandingSince.load(ordering: .acquiring)
            guard since != 0, NIODeadline.now().uptimeNanoseconds - since > UInt64(nanoseconds) else { return }
            state.tripped.store(true, ordering: .releasing)
            task.cancel()
            connection.close().whenComplete { _ in }
        }
        self.limit = limit
        self.state = state
        self.check = task
    }

    /// A statement was sent.
    func begin() {
        state.outstandingSince.store(max(NIODeadline.now().uptimeNanoseconds, 1), ordering: .releasing)
    }

    /// The statement was answered (or failed).
    func end() {
        state.outstandingSince.store(0, ordering: .releasing)
    }

    /// Whether the watchdog closed the connection.
    var tripped: Bool { state.tripped.load(ordering: .acquiring) }

    /// Stops the check (the connection is being closed or replaced).
    func stop() {
        check.cancel()
    }

    /// What the check and the statements share.
    private final class State: Sendable {
        /// The uptime in nanoseconds when the outstanding statement was sent; 0 while none is.
        let outstandingSince = Atomic<UInt64>(0)
        let tripped = Atomic(false)
    }
}
