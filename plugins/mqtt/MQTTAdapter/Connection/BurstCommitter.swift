import Dispatch
import Foundation
import HeraldPluginAPI

/// Runs one burst's commit at a time on its own serial queue, so the loop thread can read and
/// normalise the next burst while the store commits this one; and waits for each commit to be durable
/// on a second queue, so the next commit's transaction runs while the last one is synced
/// (``IngestHandle/commitDeferringDurability(_:checkpoints:)``).
///
/// The loop thread is the only caller. ``start(_:)`` waits for the previous transaction first, so commits
/// run one at a time in the order the bursts were read; ``wait()`` waits for every commit to be durable,
/// which the loop does before it acknowledges anything.
final class BurstCommitter: @unchecked Sendable {
    private let commits: DispatchQueue
    private let durability: DispatchQueue
    // All state is guarded by `condition`'s lock.
    private let condition = NSCondition()
    /// A transaction was started and has not returned.
    private var committing = false
    /// Commits whose transaction returned (or is running) and that are not durable yet.
    private var undurable = 0
    /// A commit was started and ``wait()`` has not been called since.
    private var unwaited = false
    private var failure: (any Error)?
    private let whenFinished: @Sendable () -> Void

    /// - Parameter whenFinished: called after each transaction and again once it is durable (to wake the
    ///   loop), on the committer's threads.
    init(label: String, whenFinished: @escaping @Sendable () -> Void = {}) {
        commits = DispatchQueue(label: label)
        durability = DispatchQueue(label: label + "-durability")
        self.whenFinished = whenFinished
    }

    /// Whether a commit was started and not yet waited for with ``wait()`` (it may have finished meanwhile):
    /// nothing may be acknowledged yet.
    var isPending: Bool { locked { unwaited || committing || undurable > 0 } }

    /// Whether a commit's transaction is still running.
    var isRunning: Bool { locked { committing } }

    /// Starts `commit` once the transaction before it has returned (that one may still be being synced).
    /// - Throws: an earlier commit's error; `commit` is then not started.
    func start(_ commit: @escaping @Sendable () throws -> CommitDurability) throws {
        try waitForTransaction()
        locked {
            committing = true
            undurable += 1
            unwaited = true
        }
        commits.async { [self] in
            let outcome = Result { try commit() }
            // Once `wait()` returns, the loop may drop the client `whenFinished` wakes: a wake that ends what
            // `wait()` waits for comes before it. The transaction's own end does not (its sync is still due),
            // so the loop, woken, already finds it ended and starts the next.
            guard case .success(let durable) = outcome else {
                whenFinished()
                finish(transaction: true, failure: outcome.failure)
                return
            }
            finish(transaction: true, failure: nil, durableNow: false)
            whenFinished()
            durability.async { [self] in
                let synced = Result { try durable.wait() }
                whenFinished()
                finish(transaction: false, failure: synced.failure)
            }
        }
    }

    /// Waits until the started transaction, if any, has returned.
    /// - Throws: that or an earlier commit's error.
    func waitForTransaction() throws {
        try locked { () throws -> Void in
            while committing { condition.wait() }
            try takeFailure()
        }
    }

    /// Waits until every started commit has returned and is durable.
    /// - Throws: the first error of any of them.
    func wait() throws {
        try locked { () throws -> Void in
            while committing || undurable > 0 { condition.wait() }
            unwaited = false
            try takeFailure()
        }
    }

    private func finish(transaction: Bool, failure: (any Error)?, durableNow: Bool = true) {
        locked {
            if transaction { committing = false }
            if durableNow { undurable -= 1 }
            if let failure, self.failure == nil { self.failure = failure }
            condition.broadcast()
        }
    }

    private func takeFailure() throws {
        defer { failure = nil }
        if let failure { throw failure }
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        condition.lock()
        defer { condition.unlock() }
        return try body()
    }
}

private extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
