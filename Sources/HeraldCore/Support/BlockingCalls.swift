import Dispatch

/// Runs blocking calls (the store's synchronous interface) on threads of their own, so async code
/// that needs the store never parks one of Swift's few cooperative threads on a disk or a socket.
/// A PostgreSQL store that is down or slow would otherwise stall every task of the process, the
/// sources' and the admin API's included, for as long as a connection attempt takes.
///
/// The threads are libdispatch's overcommit threads, which it adds whenever the ones it has are busy.
/// A concurrent queue would not do: on Linux it draws on the same threads as Swift's cooperative pool,
/// one per core, so a call would wait behind every task that computes for a while, and tasks behind it.
public final class BlockingCalls: Sendable {
    private let label: String

    /// Creates an executor whose calls run concurrently on threads named after `label`'s queues.
    public init(label: String = "herald-blocking-calls") {
        self.label = label
    }

    /// Runs `body` on the executor's threads and returns its result.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            // A serial queue of its own per call: serial queues run on overcommit threads, and the calls
            // still run side by side.
            DispatchQueue(label: label).async { continuation.resume(with: Result { try body() }) }
        }
    }
}
