import HeraldPluginAPI
import Synchronization

/// Where the router publishes committed events for live tail clients (the admin API's `/v1/tail`).
///
/// A slow client never slows the pipeline: each subscription has a bounded buffer, and what does not
/// fit is dropped for that client only and counted, so it can be told. With no subscribers the router
/// skips building tail records entirely.
public final class EventTap: Sendable {
    private let subscriptions = Mutex<[Int: TailSubscription]>([:])
    private let nextID = Atomic<Int>(0)
    private let count = Atomic<Int>(0)

    /// Creates a tap.
    public init() {}

    /// How many tail clients are attached.
    public var subscriberCount: Int { count.load(ordering: .relaxed) }

    /// Whether anyone is listening (checked by the router before building records).
    public var isActive: Bool { count.load(ordering: .relaxed) > 0 }

    /// Subscribes with a server-side filter and a buffer of `capacity` records.
    public func subscribe(filter: TailFilter, capacity: Int = 1024) -> TailSubscription {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let subscription = TailSubscription(id: id, filter: filter, capacity: capacity) { [weak self] in self?.remove(id) }
        subscriptions.withLock { $0[id] = subscription }
        count.add(1, ordering: .relaxed)
        return subscription
    }

    private func remove(_ id: Int) {
        if subscriptions.withLock({ $0.removeValue(forKey: id) }) != nil { count.subtract(1, ordering: .relaxed) }
    }

    /// Ends every subscription (at shutdown, so open tail streams finish).
    public func closeAll() {
        let current = subscriptions.withLock { Array($0.values) }
        current.forEach { $0.cancel() }
    }

    /// Offers committed records to every subscription.
    public func publish(_ records: [TailRecord]) {
        let current = subscriptions.withLock { Array($0.values) }
        for subscription in current { subscription.offer(records) }
    }
}

/// One tail client's view: matching records in commit order, and how many were dropped.
public final class TailSubscription: Sendable {
    /// What ``next()`` returns.
    public enum Item: Sendable {
        /// A matching record.
        case record(TailRecord)
        /// This many matching records were dropped because the client fell behind.
        case dropped(Int)
        /// Nothing arrived for a while (time for a keepalive).
        case idle
    }

    private struct State {
        var buffer: [TailRecord] = []
        var head = 0
        var dropped = 0
        var matched = 0
        var closed = false
    }

    /// The subscription's id.
    public let id: Int
    /// Its filter.
    public let filter: TailFilter
    private let capacity: Int
    private let state = Mutex(State())
    private let waiters = WaiterList()
    private let onCancel: @Sendable () -> Void

    init(id: Int, filter: TailFilter, capacity: Int, onCancel: @escaping @Sendable () -> Void) {
        self.id = id
        self.filter = filter
        self.capacity = capacity
        self.onCancel = onCancel
    }

    func offer(_ records: [TailRecord]) {
        var added = false
        state.withLock { state in
            for record in records where filter.matches(record) {
                state.matched += 1
                guard (state.matched - 1) % max(1, filter.sampleEvery) == 0 else { continue }
                if state.buffer.count - state.head >= capacity {
                    state.dropped += 1
                } else {
                    state.buffer.append(record)
                    added = true
                }
            }
        }
        if added { waiters.pulse() }
    }

    /// The next item, waiting for one; ``Item/idle`` after `idleAfter` without one; `nil` once cancelled.
    public func next(idleAfter: Duration = .seconds(15)) async -> Item? {
        let deadline = ContinuousClock.now + idleAfter
        while true {
            let item = state.withLock { state -> Item?? in
                if state.closed { return .some(nil) }
                if state.dropped > 0 {
                    defer { state.dropped = 0 }
                    return .dropped(state.dropped)
                }
                guard state.head < state.buffer.count else { return nil }
                let record = state.buffer[state.head]
                state.head += 1
                if state.head > 256, state.head * 2 > state.buffer.count {
                    state.buffer.removeFirst(state.head)
                    state.head = 0
                }
                return .record(record)
            }
            if let item { return item }
            if ContinuousClock.now >= deadline { return .idle }
            await waiters.wait(timeout: .seconds(1))
            if Task.isCancelled { return nil }
        }
    }

    /// Stops the subscription.
    public func cancel() {
        state.withLock { $0.closed = true }
        waiters.latch()
        onCancel()
    }
}
