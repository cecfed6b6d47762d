import Foundation

/// Runs `body` on a thread of its own and waits for it without holding one of Swift's cooperative threads:
/// for a store's blocking calls (a PostgreSQL round trip, a SQLite commit) from a test, so a slow server
/// does not stall the tests beside it, which share a few threads.
public func offCooperativePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
