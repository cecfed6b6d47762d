import GRDB

/// What one write-ahead-log checkpoint found and did.
public struct WALCheckpointReport: Sendable, Equatable {
    /// Frames in the log when the checkpoint began (pages written since the log last started over).
    public var logFrames: Int
    /// Whether the log was truncated because it had grown past the limit.
    public var truncated: Bool
    /// How long the pass on the writer connection held the writer (commits wait for it).
    public var writerPass: Duration

    /// Creates a report.
    public init(logFrames: Int, truncated: Bool, writerPass: Duration = .zero) {
        self.logFrames = logFrames
        self.truncated = truncated
        self.writerPass = writerPass
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

    /// Passes on the checkpoint connection at most, before the writer's.
    static let catchUpPasses = 3
    /// Frames committed during a pass that are few enough to leave to the writer's pass.
    static let framesLeftToWriter = 256

    /// Copies the write-ahead log back into the database file.
    ///
    /// 1. The bulk of the copy runs on `connection` (from ``openCheckpointConnection()``), while commits go on.
    ///    Up to ``catchUpPasses`` passes: each copies what was committed during the one before, until that is
    ///    at most ``framesLeftToWriter`` frames. (Measured at 10,000 msg/s: the writer's pass below then held
    ///    commits for 1.4 ms at the median and 7.5 ms at most, against 3.5 and 11 ms after a single pass.)
    /// 2. What is left is copied on the writer connection, between two commits.
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
        var logs: [Int] = []
        while logs.count < Self.catchUpPasses {
            let log = try await connection.queue.writeWithoutTransaction { db -> Int in
                let row = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")
                return max(row?[1] ?? 0, 0)  // -1: the log could not be read (busy)
            }
            // The log grew by what was committed during the last pass: little left means no further pass.
            if let previous = logs.last, log - previous <= Self.framesLeftToWriter { break }
            logs.append(log)
        }
        let logFrames = logs.first ?? 0
        return try await pool.writeWithoutTransaction { db in
            let start = ContinuousClock.now
            if logFrames > truncateAbovePages {
                // Busy (0 when done) if a reader kept the log past the busy timeout; then it is truncated later.
                let busy: Int = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")?[0] ?? 1
                return WALCheckpointReport(logFrames: logFrames, truncated: busy == 0, writerPass: ContinuousClock.now - start)
            }
            _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")
            return WALCheckpointReport(logFrames: logFrames, truncated: false, writerPass: ContinuousClock.now - start)
        }
    }
}
