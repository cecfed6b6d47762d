import Synchronization

/// A bounded hand-over between the task that reads a connection and the task that commits: the
/// reader never waits for a commit (so pings keep being answered) until `capacity` items are waiting;
/// the committer takes everything that is waiting, up to a batch, in one go.
final class BatchQueue<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var finished = false
        var consumer: CheckedContinuation<Void, Never>?
        var producer: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// Adds an item; waits while the queue is full. Dropped if the queue has finished.
    func push(_ item: Element) async {
        while true {
            let (done, wake) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
                if state.finished { return (true, nil) }
                guard state.items.count < capacity else { return (false, nil) }
                state.items.append(item)
                defer { state.consumer = nil }
                return (true, state.consumer)
            }
            if done {
                wake?.resume()
                return
            }
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    if state.items.count < capacity || state.finished { return true }
                    state.producer = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    /// Takes up to `limit` waiting items; waits while none are; `nil` once finished and empty.
    func take(upTo limit: Int) async -> [Element]? {
        while true {
            let (batch, done, wake) = state.withLock { state -> ([Element], Bool, CheckedContinuation<Void, Never>?) in
                let count = min(limit, state.items.count)
                let batch = Array(state.items.prefix(count))
                state.items.removeFirst(count)
                let producer = count > 0 ? state.producer : nil
                if count > 0 { state.producer = nil }
                return (batch, state.finished, producer)
            }
            wake?.resume()
            if !batch.isEmpty { return batch }
            if done { return nil }
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    if !state.items.isEmpty || state.finished { return true }
                    state.consumer = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    /// No more items will come; wakes both sides.
    func finish() {
        let (consumer, producer) = state.withLock { state in
            state.finished = true
            defer { state.consumer = nil; state.producer = nil }
            return (state.consumer, state.producer)
        }
        consumer?.resume()
        producer?.resume()
    }
}
