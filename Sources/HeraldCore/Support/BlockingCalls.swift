import Dispatch

/// Runs blocking calls (the store's synchronous interface) on threads of their own, so async code
/// that needs the store never parks one of Swift's few cooperative threads on a disk or a socket.
/// A PostgreSQL store that is down or slow would otherwise stall every task of the process, the
/// sources' and the admin API's included, for as long as a connection attempt takes.
public final class BlockingCalls: Sendable {
    private let queue: DispatchQueue

    /// Creates an executor whose calls run concurrently on a queue named `label`.
    public init(label: String = "herald-blocking-calls") {
        queue = DispatchQueue(label: label, attributes: .concurrent)
    }

    /// Runs `body` on the executor's threads and returns its result.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
