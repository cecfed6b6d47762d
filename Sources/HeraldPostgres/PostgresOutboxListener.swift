public import HeraldCore
import HeraldPluginAPI
public import Logging
public import CoreMetrics
import NIOPosix
import PostgresNIO
public import ServiceLifecycle

/// Wakes this instance's outbox dispatchers when another instance commits outputs: commits that queue
/// outputs send `NOTIFY herald_outbox` with their store's payload (delivered when they commit), and
/// this service `LISTEN`s on its own connection. Without it a dispatcher would notice another
/// instance's outputs only at its next idle poll (one second). A lost connection is opened again with
/// backoff, and every (re)connection wakes the dispatchers once for what was committed meanwhile.
public struct PostgresOutboxListener: Service, CustomStringConvertible {
    let settings: PostgresStoreSettings
    let signal: OutboxSignal
    let logger: Logger
    /// The payload of this instance's own notifications, which it skips: its router wakes its
    /// dispatchers after each commit already.
    let ownPayload: String?
    let metrics: StoreConnectionMetrics

    /// Creates the listener; notifications whose payload is `ownPayload` wake nobody. Its connections count
    /// in `metrics` under the role `listener`.
    public init(settings: PostgresStoreSettings, signal: OutboxSignal, logger: Logger, ownPayload: String? = nil,
                metrics: any MetricsFactory = NOOPMetricsHandler.instance) {
        self.settings = settings
        self.signal = signal
        self.logger = logger
        self.ownPayload = ownPayload
        self.metrics = StoreConnectionMetrics(factory: metrics, role: "listener")
    }

    /// How the service lifecycle's log lines name it: the URL without a password.
    public var description: String { "PostgreSQL outbox listener on \(settings)" }

    /// Listens until graceful shutdown.
    public func run() async throws {
        let settings = settings, signal = signal, logger = logger, ownPayload = ownPayload, metrics = metrics
        await cancelWhenGracefulShutdown {
            var backoff = Backoff(baseSeconds: 0.2, capSeconds: 10)
            var quiet = logger
            quiet.logLevel = max(logger.logLevel, .warning)
            // With a list of servers, each failure moves on to the next: a standby refuses LISTEN.
            var next = 0
            while !Task.isCancelled {
                let endpoint = settings.endpoints[next % settings.endpoints.count]
                do {
                    let connection: PostgresConnection
                    do {
                        connection = try await PostgresConnection.connect(
                            on: MultiThreadedEventLoopGroup.singleton.next(),
                            configuration: try PostgresLink.configuration(settings, endpoint: endpoint, role: "listener"), id: 2,
                            logger: quiet).get()
                    } catch {
                        metrics.refused(endpoint, PostgresStoreError.connectionFailed(settings, error))
                        throw error
                    }
                    metrics.opened(endpoint)
                    defer { metrics.closed(endpoint) }
                    backoff.reset()
                    do {
                        try await connection.listen(on: settings.outboxChannel) { notifications in
                            signal.notify()
                            for try await notification in notifications where notification.payload != ownPayload { signal.notify() }
                        }
                    } catch {
                        try? await connection.close()
                        throw error
                    }
                    try? await connection.close()
                } catch {
                    if Task.isCancelled { return }
                    next += 1
                    let delay = backoff.nextDelaySeconds()
                    logger.debug("Outbox listener lost its connection; listening again.", metadata: [
                        "error": "\(PostgresStoreError.describe(error))", "retry_in_s": "\(Int(delay * 1000)) ms",
                    ])
                    try? await Task.sleep(for: .milliseconds(Int64(delay * 1000)))
                }
            }
        }
    }
}
