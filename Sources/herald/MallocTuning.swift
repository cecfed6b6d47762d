#if canImport(Glibc)
import Glibc
#endif

/// How `herald` sets up glibc's allocator, in each part unless the environment sets that part for glibc.
///
/// - **Two arenas** (`M_ARENA_MAX`). glibc gives threads that allocate at the same time arenas of their own,
///   up to eight per core. Herald's threads (the sources' loops, the commit queue, the event loops of the
///   PostgreSQL connections and the sinks) allocate batch-sized buffers on one thread and free them on
///   another, so every arena keeps its own high-water mark: draining a backlog of 5-member group chats into
///   PostgreSQL peaked at 94–165 MiB of anonymous memory with glibc's default and at 78 MiB with two arenas,
///   at the same speed and CPU per message (`herald-bench --herald-only --members 5 --store postgres`).
/// - **A fixed mmap threshold of 256 KiB** (`M_MMAP_THRESHOLD`) on a SQLite store, set once the
///   configuration is read. A batch's large arrays and dictionaries then get mappings of their own, which go
///   back to the kernel when freed. By default glibc raises the threshold to the size of each large block
///   freed, up to 32 MiB, so after the first large batch those blocks come from the heap, whose freed space
///   stays in the process between batches: draining a backlog of direct chats into SQLite peaked at 27–28 MiB
///   RssAnon this way against 31–32 MiB (alternated pairs of `herald-bench --herald-only`), at the same rate
///   and CPU per message. On PostgreSQL a batch's statement holds tens of MB, which would be mapped and
///   faulted in anew for every batch: 5-member groups took about 3 µs more of Herald's CPU per message
///   (38–39 against 33–37 µs) for 53 against 62–64 MiB, so there glibc keeps its default.
enum MallocTuning {
    /// Two arenas: the main one and one for every other thread.
    static let arenaLimit: Int32 = 2
    /// Blocks of this many bytes and more are mapped on their own.
    static let mmapThreshold: Int32 = 256 * 1024

    /// `M_ARENA_MAX` and `M_MMAP_THRESHOLD` in glibc's `malloc.h`, which Swift's Glibc module does not import.
    private static let arenaMaxParameter: Int32 = -8
    private static let mmapThresholdParameter: Int32 = -3

    /// What Herald sets under `environment` for a store that is SQLite or not; a part is `nil` where the
    /// environment sets it for glibc (`MALLOC_ARENA_MAX`, `MALLOC_MMAP_THRESHOLD_` or the matching
    /// `GLIBC_TUNABLES` entry), where Herald leaves it to glibc, and where there is no glibc.
    struct Settings: Equatable {
        /// The arena limit, or `nil`.
        var arenaLimit: Int32?
        /// The mmap threshold in bytes, or `nil`.
        var mmapThreshold: Int32?
    }

    /// The settings for `environment` and the store (see ``Settings``).
    static func settings(for environment: [String: String], sqliteStore: Bool) -> Settings {
        #if canImport(Glibc)
        let tunables = environment["GLIBC_TUNABLES"] ?? ""
        func setByEnvironment(_ variable: String, tunable: String) -> Bool {
            environment[variable] != nil || tunables.split(separator: ":").contains { $0.hasPrefix("glibc.malloc.\(tunable)=") }
        }
        return Settings(arenaLimit: setByEnvironment("MALLOC_ARENA_MAX", tunable: "arena_max") ? nil : arenaLimit,
                        mmapThreshold: !sqliteStore || setByEnvironment("MALLOC_MMAP_THRESHOLD_", tunable: "mmap_threshold") ? nil : mmapThreshold)
        #else
        Settings()
        #endif
    }

    /// Applies the arena limit of ``settings(for:sqliteStore:)``. Called once, as the process starts, before
    /// any thread but the main one exists.
    static func applyArenaLimit(environment: [String: String]) {
        if let limit = settings(for: environment, sqliteStore: false).arenaLimit { mallopt(arenaMaxParameter, limit) }
    }

    /// Applies the mmap threshold of `settings` (from ``settings(for:sqliteStore:)``), if it has one, once the
    /// configuration says which store runs. It applies to blocks allocated from then on.
    static func applyMmapThreshold(of settings: Settings) {
        if let threshold = settings.mmapThreshold { mallopt(mmapThresholdParameter, threshold) }
    }

    /// glibc's `mallopt`, looked up at run time: Swift's Glibc module does not import it.
    private static func mallopt(_ parameter: Int32, _ value: Int32) {
        #if canImport(Glibc)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        _ = unsafeBitCast(symbol, to: Mallopt.self)(parameter, value)
        #endif
    }
}
