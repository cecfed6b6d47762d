import Dispatch
import Synchronization

/// Runs one burst's commit at a time on its own serial queue, so the loop thread can read and
/// normalise the next burst while the store commits this one.
///
/// The loop thread is the only caller. ``start(_:)`` waits for the previous commit first, so commits
/// run one at a time in the order the bursts were read.
final class BurstCommitter: Sendable {
    private let queue: DispatchQueue
    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)
    private let whenFinished: @Sendable () -> Void

    private struct State {
        /// A commit was started and its completion not yet waited for.
        var started = false
        /// The started commit has returned.
        var done = false
        var failure: (any Error)?
    }

    /// - Parameter whenFinished: called on the committer's thread after each commit (to wake the loop).
    init(label: String, whenFinished: @escaping @Sendable () -> Void = {}) {
        queue = DispatchQueue(label: label)
        self.whenFinished = whenFinished
    }

    /// Whether a commit was started and not yet waited for (it may have finished meanwhile).
    var isPending: Bool { state.withLock { $0.started } }

    /// Whether a commit is still running.
    var isRunning: Bool { state.withLock { $0.started && !$0.done } }

    /// Starts `commit` after waiting for the one before it.
    /// - Throws: the previous commit's error; `commit` is then not started.
    func start(_ commit: @escaping @Sendable () throws -> Void) throws {
        try wait()
        state.withLock {
            $0.started = true
            $0.done = false
        }
        queue.async { [self] in
            var failure: (any Error)?
            do { try commit() } catch { failure = error }
            state.withLock {
                $0.failure = failure
                $0.done = true
            }
            // Before the signal: once `wait()` returns, the loop may drop the client `whenFinished` wakes.
            whenFinished()
            finished.signal()
        }
    }

    /// Waits until the started commit, if any, has finished.
    /// - Throws: that commit's error.
    func wait() throws {
        if isPending {
            finished.wait()
            state.withLock { $0.started = false }
        }
        let failure = state.withLock { state -> (any Error)? in
            defer { state.failure = nil }
            return state.failure
        }
        if let failure { throw failure }
    }
}
