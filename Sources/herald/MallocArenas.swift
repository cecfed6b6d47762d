#if canImport(Glibc)
import Glibc
#endif

/// How many glibc malloc arenas `herald` allows, unless `MALLOC_ARENA_MAX` says otherwise.
///
/// glibc gives threads that allocate at the same time arenas of their own, up to eight per core. Herald's
/// threads (the sources' loops, the commit queue, the event loops of the PostgreSQL connections and the
/// sinks) allocate batch-sized buffers on one thread and free them on another, so every arena keeps its
/// own high-water mark: draining a backlog of 5-member group chats into PostgreSQL peaked at 94–165 MiB
/// of anonymous memory with glibc's default and at 78 MiB with two arenas, at the same speed and CPU
/// per message (`herald-bench --herald-only --members 5 --store postgres`, see docs/benchmarks.md).
enum MallocArenas {
    /// Two arenas: the main one and one for every other thread.
    static let limit: Int32 = 2

    /// `M_ARENA_MAX` in glibc's `malloc.h`, which Swift's Glibc module does not import.
    private static let arenaMaxParameter: Int32 = -8

    /// The limit Herald sets under `environment`: ``limit``, or `nil` where `MALLOC_ARENA_MAX` is set
    /// (glibc then follows it) or there is no glibc to set it in.
    static func limit(for environment: [String: String]) -> Int32? {
        #if canImport(Glibc)
        environment["MALLOC_ARENA_MAX"] == nil ? limit : nil
        #else
        nil
        #endif
    }

    /// Sets ``limit(for:)`` in glibc. Called once, as the process starts, before any thread but the main
    /// one exists.
    static func apply(environment: [String: String]) {
        #if canImport(Glibc)
        guard let value = limit(for: environment), let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        _ = unsafeBitCast(symbol, to: Mallopt.self)(arenaMaxParameter, value)
        #endif
    }
}
