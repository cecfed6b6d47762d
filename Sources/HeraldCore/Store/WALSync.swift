import Foundation

/// Makes the SQLite store's commits durable outside its writer: the group `fdatasync` of the
/// write-ahead log that `synchronous = FULL` would run inside every commit, while the writer is held.
///
/// With `durability: full` the writer runs with `synchronous = NORMAL` (commits write their frames to the
/// log, unsynced; checkpoints sync the log before they copy it back and the database file after), and each
/// commit then calls ``sync()`` before it counts as durable. The writer is free meanwhile, so the next
/// transaction runs while this one is synced, and one sync covers every commit that finished before it
/// began: what `FULL` makes durable, with the sync after the writer instead of inside it.
///
/// A failed sync is final: the kernel may have dropped the pages it could not write, so no later sync can
/// vouch for them. Every ``sync()`` after it throws, and no commit counts as durable until Herald restarts.
final class WALSync: @unchecked Sendable {
    // All state is guarded by `condition`'s lock; the file is used only by the one sync running.
    private let condition = NSCondition()
    /// The write-ahead log's path (the store's path and `-wal`).
    let path: String
    private var started = 0
    private var finished = 0
    private var running = false
    private var failure: SQLiteStoreError?
    /// Calls of ``sync()`` so far (tests wait for callers to arrive).
    private var calls = 0
    private var file: Int32 = -1
    /// How a sync reaches the disk: `fdatasync` on the log; tests count it.
    private let syncFile: @Sendable (Int32) -> Int32

    /// Syncs the log of the store at `storePath`.
    init(storePath: String, syncFile: @escaping @Sendable (Int32) -> Int32 = { fdatasync($0) }) {
        path = storePath + "-wal"
        self.syncFile = syncFile
    }

    deinit {
        if file >= 0 { close(file) }
    }

    /// Syncs that finished.
    var completed: Int { locked { finished } }

    /// Calls of ``sync()`` so far, returned or not.
    var callers: Int { locked { calls } }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    /// Syncs the log, unless a sync that began after this call was made finishes first (it covers this
    /// caller's commit as well): returns once every commit that finished before the call is durable.
    /// - Throws: ``SQLiteStoreError/walSyncFailed(path:detail:)`` for this sync or any before it.
    func sync() throws(SQLiteStoreError) {
        condition.lock()
        defer { condition.unlock() }
        calls += 1
        // A sync running now may have begun before the caller's commit finished: only the next one counts.
        let needed = started + 1
        while finished < needed {
            if let failure { throw failure }
            if running {
                condition.wait()
                continue
            }
            running = true
            started += 1
            let number = started
            condition.unlock()
            let outcome = syncLog()
            condition.lock()
            running = false
            if let outcome { failure = outcome } else { finished = number }
            condition.broadcast()
        }
    }

    /// Syncs the log through a descriptor of its own, opened again when the log was replaced (SQLite
    /// keeps one log while the store is open; a log deleted and created again is another file).
    private func syncLog() -> SQLiteStoreError? {
        if file >= 0, !isCurrentLog(file) {
            close(file)
            file = -1
        }
        if file < 0 {
            file = open(path, O_RDONLY | O_CLOEXEC)
            if file < 0 { return .walSyncFailed(path: path, detail: String(cString: strerror(errno))) }
        }
        guard syncFile(file) == 0 else { return .walSyncFailed(path: path, detail: String(cString: strerror(errno))) }
        return nil
    }

    private func isCurrentLog(_ descriptor: Int32) -> Bool {
        var held = stat(), named = stat()
        guard fstat(descriptor, &held) == 0, stat(path, &named) == 0 else { return false }
        return held.st_dev == named.st_dev && held.st_ino == named.st_ino
    }
}
