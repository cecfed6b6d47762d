import Foundation
import GRDB
public import HeraldPluginAPI
public import ServiceLifecycle

/// Copies the SQLite write-ahead log back into the database file from its own connection, so the
/// writer never pays for a checkpoint inside a commit (the writer's automatic checkpoint is off).
/// PASSIVE checkpoints never block the writer; when the log grows past `truncateAbovePages` a
/// TRUNCATE checkpoint resets it. A final checkpoint runs at shutdown.
public struct WALCheckpointer: Service {
    let path: String
    let interval: Duration
    let truncateAbovePages: Int
    let logger: Logger

    /// Creates the service for the store at `path`.
    public init(path: String, interval: Duration = .milliseconds(500), truncateAbovePages: Int = 50_000, logger: Logger) {
        self.path = path
        self.interval = interval
        self.truncateAbovePages = truncateAbovePages
        self.logger = logger
    }

    /// Checkpoints until shutdown.
    public func run() async throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        let connection = try DatabaseQueue(path: path, configuration: configuration)
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            checkpoint(connection)
        }
        checkpoint(connection)
    }

    private func checkpoint(_ connection: DatabaseQueue) {
        do {
            try connection.writeWithoutTransaction { db in
                let row = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")
                let logPages: Int = row?[1] ?? 0
                if logPages > truncateAbovePages { _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            }
        } catch {
            logger.warning("WAL checkpoint failed; will retry.", metadata: ["error": "\(error)"])
        }
    }
}
