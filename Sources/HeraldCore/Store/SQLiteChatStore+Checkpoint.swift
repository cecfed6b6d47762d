import GRDB

/// What one write-ahead-log checkpoint found and did.
public struct WALCheckpointReport: Sendable, Equatable {
    /// Frames in the log when the checkpoint began (pages written since the log last started over).
    public var logFrames: Int
    /// Whether the log was truncated because it had grown past the limit.
    public var truncated: Bool

    /// Creates a report.
    public init(logFrames: Int, truncated: Bool) {
        self.logFrames = logFrames
        self.truncated = truncated
    }
}

/// A connection of its own that runs the bulk of each write-ahead-log checkpoint, while the writer
/// goes on committing (see ``SQLiteChatStore/checkpointWAL(using:truncateAbovePages:)``).
public struct WALCheckpointConnection: Sendable {
    let queue: DatabaseQueue
}

extension SQLiteChatStore {
    /// Opens the connection that ``checkpointWAL(using:truncateAbovePages:)`` copies the log back on.
    /// Only the running gateway checkpoints, so stores opened by command-line tools never open one.
    public func openCheckpointConnection() throws -> WALCheckpointConnection {
        var configuration = Configuration()
        configuration.readonly = readOnly
        configuration.busyMode = .timeout(5)
        return WALCheckpointConnection(queue: try DatabaseQueue(path: path, configuration: configuration))
    }

    /// Copies the write-ahead log back into the database file, in two passes.
    ///
    /// 1. The bulk of the copy runs on `connection` (from ``openCheckpointConnection()``), while commits go on.
    /// 2. What was committed meanwhile is copied on the writer connection, between two commits.
    ///
    /// The second pass is what keeps the log small. SQLite starts the log over only when a write
    /// transaction begins with every frame already copied back (and no reader still on the log). A
    /// checkpoint on another connection races the writer for that moment and, under steady load, loses
    /// every time: the log then grows until a TRUNCATE checkpoint has to block the writer for as long as
    /// it takes (over 100 ms, measured at 8,000 msg/s). A reader in the middle of a read when the next
    /// commit begins only postpones the restart to a later checkpoint. A log longer than
    /// `truncateAbovePages` (another process holding a long read, say) is truncated on the writer
    /// connection.
    public func checkpointWAL(using connection: WALCheckpointConnection, truncateAbovePages: Int) async throws -> WALCheckpointReport {
        guard !readOnly else { return WALCheckpointReport(logFrames: 0, truncated: false) }
        let logFrames = try await connection.queue.writeWithoutTransaction { db -> Int in
            let row = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")
            return max(row?[1] ?? 0, 0)  // -1: the log could not be read (busy)
        }
        return try await pool.writeWithoutTransaction { db in
            if logFrames > truncateAbovePages {
                // Busy (0 when done) if a reader kept the log past the busy timeout; then it is truncated later.
                let busy: Int = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")?[0] ?? 1
                return WALCheckpointReport(logFrames: logFrames, truncated: busy == 0)
            }
            _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")
            return WALCheckpointReport(logFrames: logFrames, truncated: false)
        }
    }
}
