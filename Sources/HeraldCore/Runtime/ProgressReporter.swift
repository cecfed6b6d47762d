import Foundation
public import HeraldPluginAPI
public import ServiceLifecycle

/// Logs one line per interval while events flow: rates, duplicates, dead letters, outbox depth.
public struct ProgressReporter: Service, CustomStringConvertible {
    let totals: IngestTotals
    let store: any ChatStore
    let blocking: BlockingCalls
    let logger: Logger
    let interval: Duration

    /// Creates the reporter; it reads the outbox depth through `blocking`.
    public init(totals: IngestTotals, store: any ChatStore, blocking: BlockingCalls, logger: Logger, interval: Duration = .seconds(10)) {
        self.totals = totals
        self.blocking = blocking
        self.store = store
        self.logger = logger
        self.interval = interval
    }

    /// How the service lifecycle's log lines name it.
    public var description: String { "progress reporter (every \(interval))" }

    /// Reports until shutdown.
    public func run() async throws {
        var last = totals.snapshot()
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            let now = totals.snapshot()
            guard now != last, !Task.isShuttingDownGracefully else { continue }
            let store = store
            let depth = (try? await blocking.run { try store.outboxDepth().values.reduce(0, +) }) ?? -1
            logger.info("Ingest progress.", metadata: [
                "events_per_s": "\(String(format: "%.0f", Double(now.applied + now.duplicates - last.applied - last.duplicates) / seconds))",
                "applied": "\(now.applied)", "duplicates": "\(now.duplicates)", "dead_lettered": "\(now.deadLettered)",
                "outputs_queued": "\(now.outputs)", "outbox_depth": "\(depth)",
            ])
            last = now
        }
    }
}

