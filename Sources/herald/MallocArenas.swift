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

    /// Limits the arenas, unless the environment sets `MALLOC_ARENA_MAX` (glibc then follows it). Called
    /// as the process starts, before any thread but the main one exists. Returns the limit it set, or `nil`.
    @discardableResult
    static func limit(environment: [String: String]) -> Int32? {
        #if canImport(Glibc)
        guard environment["MALLOC_ARENA_MAX"] == nil,
              let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return nil }
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        return unsafeBitCast(symbol, to: Mallopt.self)(arenaMaxParameter, limit) == 1 ? limit : nil
        #else
        return nil
        #endif
    }
}
