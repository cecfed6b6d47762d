import HeraldPluginAPI
import NIOCore
import PostgresNIO
import Synchronization

/// Closes a connection whose statement has gone unanswered for longer than `limit`, so a server that
/// hangs with its sockets open (a network partition, a frozen host) fails the statement instead of
/// holding the pipeline.
///
/// The statement's caller waits on a promise of its own that the watchdog fails when it trips, rather
/// than on the connection's answer alone: closing a connection under a statement does not always fail
/// that statement's future in PostgresNIO (under load, a commit was seen waiting on it for good after the
/// close). Once tripped, the watchdog fails every later statement on its connection at once, and the link
/// never hands that connection out again.
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
            task.cancel()
            // Tripped before the close fails the statement, so its caller reports it as unanswered.
            let answer = state.trip()
            connection.close().whenComplete { _ in }
            answer?.fail(Unanswered())
        }
        self.limit = limit
        self.state = state
        self.check = task
    }

    /// A statement is about to be sent; `answer` is what its caller waits on. After a trip it fails at once.
    func begin(answering answer: EventLoopPromise<PostgresQueryResult>) {
        state.outstandingSince.store(max(NIODeadline.now().uptimeNanoseconds, 1), ordering: .releasing)
        if !state.watch(answer) { answer.fail(Unanswered()) }
    }

    /// The statement was answered (or failed).
    func end() {
        state.outstandingSince.store(0, ordering: .releasing)
        state.unwatch()
    }

    /// Whether the watchdog closed the connection.
    var tripped: Bool { state.isTripped }

    /// Stops the check (the connection is being closed or replaced).
    func stop() {
        check.cancel()
    }

    /// The error an unanswered statement's promise fails with; the session reports it as
    /// ``PostgresStoreError/noAnswer(after:)``.
    struct Unanswered: Error {}

    /// What the check and the statements share.
    private final class State: Sendable {
        /// The uptime in nanoseconds when the outstanding statement was sent; 0 while none is.
        let outstandingSince = Atomic<UInt64>(0)
        /// The outstanding statement's promise, and whether the watchdog has tripped.
        private let watched = Mutex<(answer: EventLoopPromise<PostgresQueryResult>?, tripped: Bool)>((nil, false))

        var isTripped: Bool { watched.withLock { $0.tripped } }

        /// Holds `answer` for a trip; `false` if the watchdog has already tripped.
        func watch(_ answer: EventLoopPromise<PostgresQueryResult>) -> Bool {
            watched.withLock { state in
                state.answer = answer
                return !state.tripped
            }
        }

        func unwatch() {
            watched.withLock { $0.answer = nil }
        }

        /// Marks the watchdog tripped; returns the outstanding statement's promise to fail.
        func trip() -> EventLoopPromise<PostgresQueryResult>? {
            watched.withLock { state in
                state.tripped = true
                return state.answer
            }
        }
    }
}
