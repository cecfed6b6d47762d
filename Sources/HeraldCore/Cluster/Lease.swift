import HeraldPluginAPI
import Synchronization

/// One named lease in the store, taken and renewed by this instance (``ChatStore/holdLease(_:holder:ttl:)``).
///
/// An instance does a lease's work (delivers a sink's outbox, runs a singleton source) only while it
/// holds the lease. It renews it whenever a third of the TTL has passed, so a holder that stops
/// renewing (killed, frozen, cut off from the database) loses it within one TTL and another instance
/// takes it over. On a store only one process uses (SQLite) every lease is granted.
public final class Lease: Sendable {
    /// The lease's name: `outbox:SINK` or `source:NAME`.
    public let name: String
    /// This instance.
    public let identity: InstanceIdentity
    /// How long a renewal lasts.
    public let ttl: Duration
    let store: any ChatStore
    let blocking: BlockingCalls
    private let state = Mutex<(held: Bool, renewedAt: ContinuousClock.Instant?)>((false, nil))

    /// Creates the lease (it is not taken until ``check()``).
    public init(name: String, identity: InstanceIdentity, ttl: Duration, store: any ChatStore, blocking: BlockingCalls) {
        self.name = name
        self.identity = identity
        self.ttl = ttl
        self.store = store
        self.blocking = blocking
    }

    /// The result of a ``check()``.
    public struct Status: Sendable, Equatable {
        /// Whether this instance holds the lease now.
        public var held: Bool
        /// Whether it was not held before this check: work resumes from the store's state, which
        /// another holder may have changed.
        public var acquired: Bool
    }

    /// Whether this instance holds the lease, asking the store when a third of the TTL has passed
    /// since the last renewal (or the lease is not held). A store failure throws; the lease then
    /// counts as lost, since it may expire before the store answers again.
    public func check() async throws -> Status {
        let (held, renewedAt) = state.withLock { $0 }
        if held, let renewedAt, ContinuousClock.now - renewedAt < ttl / 3 { return Status(held: true, acquired: false) }
        let name = name, holder = identity.holder, ttl = ttl, store = store
        let asked = ContinuousClock.now
        let granted: Bool
        do {
            granted = try await blocking.run { try store.holdLease(name, holder: holder, ttl: ttl) }
        } catch {
            state.withLock { $0 = (false, nil) }
            throw error
        }
        state.withLock { $0 = (granted, granted ? asked : nil) }
        return Status(held: granted, acquired: granted && !held)
    }

    /// Whether the lease was held at the last check.
    public var isHeld: Bool { state.withLock { $0.held } }

    /// Gives the lease up so another instance can take it at once (graceful shutdown).
    public func release() async {
        guard state.withLock({ $0.held }) else { return }
        state.withLock { $0 = (false, nil) }
        let name = name, holder = identity.holder, store = store
        _ = try? await blocking.run { try store.releaseLease(name, holder: holder) }
    }
}
