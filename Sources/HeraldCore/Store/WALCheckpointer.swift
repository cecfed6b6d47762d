import Foundation
public import HeraldPluginAPI
import Metrics
public import CoreMetrics
public import ServiceLifecycle

/// Checkpoints the store's write-ahead log at an interval, so the writer never pays for one inside a
/// commit (the writer's automatic checkpoint is off) and the log starts over instead of growing
/// (see ``SQLiteChatStore/checkpointWAL(using:truncateAbovePages:)``). A final checkpoint runs at shutdown.
public struct WALCheckpointer: Service, CustomStringConvertible {
    let store: SQLiteChatStore
    let interval: Duration
    let truncateAbovePages: Int
    let logger: Logger
    let duration: Metrics.Timer
    let writerPass: Metrics.Timer
    let logFrames: Gauge
    let truncations: Counter

    /// Creates the service for `store`.
    public init(store: SQLiteChatStore, interval: Duration = .milliseconds(500), truncateAbovePages: Int = 50_000,
                logger: Logger, metrics: any MetricsFactory) {
        self.store = store
        self.interval = interval
        self.truncateAbovePages = truncateAbovePages
        self.logger = logger
        duration = Metrics.Timer(label: "herald_wal_checkpoint_duration_seconds", factory: metrics)
        writerPass = Metrics.Timer(label: "herald_wal_checkpoint_writer_pass_seconds", factory: metrics)
        logFrames = Gauge(label: "herald_wal_log_frames", factory: metrics)
        truncations = Counter(label: "herald_wal_truncations_total", factory: metrics)
    }

    /// How the service lifecycle's log lines name it.
    public var description: String { "WAL checkpointer (every \(interval))" }

    /// Checkpoints until shutdown.
    public func run() async throws {
        var connection: WALCheckpointConnection?
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            await checkpoint(on: &connection)
        }
        await checkpoint(on: &connection)
    }

    /// One checkpoint; opens the checkpoint connection first if it is not open yet.
    private func checkpoint(on connection: inout WALCheckpointConnection?) async {
        let start = ContinuousClock.now
        do {
            let opened = try connection ?? store.openCheckpointConnection()
            connection = opened
            let report = try await store.checkpointWAL(using: opened, truncateAbovePages: truncateAbovePages)
            duration.recordNanoseconds((ContinuousClock.now - start).nanoseconds)
            writerPass.recordNanoseconds(report.writerPass.nanoseconds)
            logFrames.record(report.logFrames)
            if report.truncated {
                truncations.increment()
                logger.notice("WAL grew past the limit and was truncated.", metadata: [
                    "frames": "\(report.logFrames)", "limit": "\(truncateAbovePages)"])
            }
        } catch {
            logger.warning("WAL checkpoint failed; will retry.", metadata: ["error": "\(error)"])
        }
    }
}
