import HeraldCore

/// Runs `body` on a thread outside Swift's cooperative pool and waits for it without holding one of the
/// pool's threads: for a store's blocking calls (a PostgreSQL round trip, a SQLite commit) from a test, so
/// a slow server does not stall the tests beside it, which share a few threads. The same mechanism as the
/// gateway's own store calls (``BlockingCalls``).
public func offCooperativePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await BlockingCalls(label: "herald-tests-blocking-calls").run(body)
}
