import Mosquitto
import Synchronization

/// Matches PUBACKs (by message id) to the batch waiting for them. An ack may arrive before the
/// publisher has registered the id, so unclaimed acks are remembered too. An MQTT 5 PUBACK may carry a
/// refusal (reason code 0x80 or above): that publish is answered but not confirmed, and the first
/// refusal in batch order is kept for the caller.
final class PublishTracker: Sendable {
    private struct State {
        var waiting: [Int32: Int] = [:]          // message id → index in the batch
        var earlyAcks: [Int32: MosquittoReasonCode] = [:]
        var confirmed: Set<Int> = []
        var refused: [Int: MosquittoReasonCode] = [:]
        var expected = 0
        var abandoned = false
        var continuation: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    /// Starts a batch of `count` publishes.
    func begin(count: Int) {
        state.withLock { $0 = State(expected: count) }
    }

    /// Registers the message id of the publish at `index`.
    func register(messageID: Int32, index: Int) {
        let done = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let reason = state.earlyAcks.removeValue(forKey: messageID) {
                Self.record(reason, index: index, in: &state)
            } else {
                state.waiting[messageID] = index
            }
            return takeIfComplete(&state)
        }
        done?.resume()
    }

    /// A PUBACK arrived with the broker's reason code.
    func acknowledge(messageID: Int32, reason: MosquittoReasonCode) {
        let done = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let index = state.waiting.removeValue(forKey: messageID) {
                Self.record(reason, index: index, in: &state)
            } else {
                state.earlyAcks[messageID] = reason
            }
            return takeIfComplete(&state)
        }
        done?.resume()
    }

    /// Fails the wait (connection lost): wakes the waiter with what is confirmed so far.
    func abandon() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.abandoned = true
            defer { state.continuation = nil }
            return state.continuation
        }
        waiter?.resume()
    }

    /// Waits until every publish is confirmed, ``abandon()`` is called or `timeout` passes.
    /// - Returns: how many leading publishes are confirmed.
    func waitForConfirmations(timeout: Duration) async -> Int {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let resumeNow = self.state.withLock { state -> Bool in
                        if state.abandoned || state.confirmed.count + state.refused.count >= state.expected { return true }
                        state.continuation = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                self.abandon()
            }
            await group.next()
            group.cancelAll()
        }
        return state.withLock { state in
            var prefix = 0
            while state.confirmed.contains(prefix) { prefix += 1 }
            return prefix
        }
    }

    /// The refusal right after the confirmed prefix, if the broker refused that publish.
    func refusal(at index: Int) -> MosquittoReasonCode? {
        state.withLock { $0.refused[index] }
    }

    private static func record(_ reason: MosquittoReasonCode, index: Int, in state: inout State) {
        if reason.isSuccess { state.confirmed.insert(index) } else { state.refused[index] = reason }
    }

    private func takeIfComplete(_ state: inout State) -> CheckedContinuation<Void, Never>? {
        guard state.confirmed.count + state.refused.count >= state.expected, let waiter = state.continuation else { return nil }
        state.continuation = nil
        return waiter
    }
}
