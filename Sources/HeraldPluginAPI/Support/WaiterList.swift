import Synchronization

/// Continuations waiting for a signal, removable on cancellation so waits can race timers.
/// The building block of ``ShutdownSignal`` and the core's outbox signal.
public final class WaiterList: Sendable {
    private struct State {
        var nextID = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Set once: every present and future wait returns at once.
        var latched = false
        /// Set by a pulse with nobody waiting; the next wait consumes it.
        var pending = false
    }

    private let state = Mutex(State())

    /// Creates an empty list.
    public init() {}

    /// Whether ``latch()`` was called.
    public var isLatched: Bool { state.withLock { $0.latched } }

    /// Wakes every current waiter and every future one.
    public func latch() {
        resume(state.withLock { state in
            state.latched = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        })
    }

    /// Wakes every current waiter; with none waiting, the next ``wait()`` returns at once.
    public func pulse() {
        resume(state.withLock { state in
            if state.waiters.isEmpty { state.pending = true }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        })
    }

    /// Waits for a pulse or the latch. Returns early, without error, when the task is cancelled.
    public func wait() async {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.latched || Task.isCancelled { return true }
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            resume(state.withLock { state in state.waiters.removeValue(forKey: id).map { [$0] } ?? [] })
        }
    }

    /// Waits for a pulse, the latch, or `timeout`, whichever comes first.
    public func wait(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.wait() }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    private func resume(_ continuations: [CheckedContinuation<Void, Never>]) {
        continuations.forEach { $0.resume() }
    }
}
