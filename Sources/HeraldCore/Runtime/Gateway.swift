import Foundation
public import HeraldPluginAPI
import ServiceLifecycle
import UnixSignals

/// Assembles a running gateway from a validated configuration: the store, the router, one service
/// per source and sink, an outbox dispatcher per sink, and a progress reporter, in one service group.
///
/// Shutdown (SIGTERM/SIGINT, or a SIGHUP that reloads the config) runs in reverse order of start: the
/// reporter stops, sources stop taking input and commit and acknowledge what is in flight, dispatchers
/// drain the outbox (bounded by `outbox.drain_timeout_s`), sinks disconnect.
public struct Gateway: Sendable {
    let configuration: HeraldConfiguration
    let logger: Logger
    let metrics: any MetricsFactory
    let clock: any WallClock
    let extensions: @Sendable (GatewayParts) throws -> [any Service]
    let openStore: @Sendable (StoreSection, Logger, any MetricsFactory) throws -> any GatewayStore
    let reloadConfiguration: (@Sendable () throws -> HeraldConfiguration)?

    /// How a run ended.
    public enum Exit: Sendable {
        /// A shutdown signal (SIGTERM, SIGINT) stopped it.
        case stopped
        /// SIGHUP brought this valid config; the gateway stopped gracefully so that it can start on it.
        case reload(HeraldConfiguration)
    }

    /// Creates a gateway. `openStore` opens the store the configuration names (SQLite or PostgreSQL) and
    /// hands it the gateway's metrics; `extensions` adds services built from the running parts (the admin API).
    /// With `reloadConfiguration` (which reads and validates the config file again), SIGHUP reloads the config.
    public init(configuration: HeraldConfiguration, logger: Logger, metrics: any MetricsFactory, clock: any WallClock = SystemClock(),
                openStore: @escaping @Sendable (StoreSection, Logger, any MetricsFactory) throws -> any GatewayStore,
                reloadConfiguration: (@Sendable () throws -> HeraldConfiguration)? = nil,
                extensions: @escaping @Sendable (GatewayParts) throws -> [any Service] = { _ in [] }) {
        self.reloadConfiguration = reloadConfiguration
        self.openStore = openStore
        self.configuration = configuration
        self.logger = logger
        self.metrics = metrics
        self.clock = clock
        self.extensions = extensions
    }

    /// Runs until a shutdown signal, or a SIGHUP with a valid config; returns after a graceful shutdown.
    @discardableResult
    public func run() async throws -> Exit {
        let store = try openStore(configuration.store, logger, metrics)
        let sinks = try configuration.sinks.map { try $0.settings.makeSink(name: $0.name) }
        let signal = OutboxSignal()
        let blocking = BlockingCalls()
        let totals = IngestTotals()
        let tap = EventTap()
        let commitHealth = CommitHealth()
        let router = EventRouter(
            store: store, policy: configuration.router.policy,
            routing: OutputRouting(sinkAccepts: sinks.map { ($0.name, $0.accepts) }), clock: clock,
            metrics: RouterMetrics(factory: metrics), signal: signal, logger: logger, totals: totals, tap: tap, commitHealth: commitHealth)
        var health: [(name: String, health: SourceHealth)] = []
        let identity = configuration.instance.identity
        func lease(_ name: String) -> Lease {
            Lease(name: name, identity: identity, ttl: configuration.instance.leaseTTL, store: store, blocking: blocking)
        }

        var services: [ServiceGroupConfiguration.ServiceConfiguration] = store.maintenanceServices(logger: logger, metrics: metrics, outboxSignal: signal)
            .map { .init(service: $0) }
        for sink in sinks {
            let sinkLogger = logger.with("sink", sink.name)
            services.append(.init(service: AdapterService(sink: sink, context: SinkContext(logger: sinkLogger, shutdown: ShutdownSignal()))))
            services.append(.init(service: OutboxDispatcher(
                sink: sink, store: store, signal: signal, logger: sinkLogger, metrics: metrics, clock: clock, blocking: blocking,
                batchSize: configuration.outbox.batchSize,
                drainTimeout: .milliseconds(Int64(configuration.outbox.drainTimeoutSeconds * 1000)), lease: lease("outbox:\(sink.name)"))))
        }
        for section in configuration.sources {
            let source = try section.settings.makeSource(name: section.name)
            let context = SourceContext(ingest: router, logger: logger.with("source", section.name),
                                        metrics: SourceMetrics(adapter: section.name, factory: metrics),
                                        shutdown: ShutdownSignal(), clock: clock)
            health.append((section.name, context.health))
            if section.settings.runsOncePerDeployment {
                services.append(.init(service: SingletonSourceService(source: source, context: context, lease: lease("source:\(section.name)"))))
            } else {
                services.append(.init(service: AdapterService(source: source, context: context)))
            }
        }
        services.append(.init(service: ProgressReporter(totals: totals, store: store, blocking: blocking, logger: logger)))
        let parts = GatewayParts(configuration: configuration, identity: identity, store: store, blocking: blocking, tap: tap, totals: totals, commitHealth: commitHealth,
                                 sourceHealth: health, clock: clock, metrics: metrics, logger: logger)
        services += try extensions(parts).map { .init(service: $0) }
        let reloader = reloadConfiguration.map { ConfigurationReloader(load: $0, logger: logger.with("component", "reload"), metrics: metrics, clock: clock) }
        if let reloader { services.append(.init(service: reloader, successTerminationBehavior: .gracefullyShutdownGroup)) }

        var groupConfiguration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger.with("component", "lifecycle"))
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(9)
        groupConfiguration.maximumCancellationDuration = .seconds(1)
        logger.info("Herald starting.", metadata: store.startupMetadata().merging([
            "sources": "\(configuration.sources.map(\.name))", "sinks": "\(configuration.sinks.map(\.name))", "instance": "\(identity)",
        ]) { $1 })
        let group = ServiceGroup(configuration: groupConfiguration)
        if let reloader {
            try await reloader.watchingTermination { try await group.run() }
        } else {
            try await group.run()
        }
        let summary = totals.snapshot()
        logger.info("Herald stopped.", metadata: [
            "applied": "\(summary.applied)", "duplicates": "\(summary.duplicates)", "dead_lettered": "\(summary.deadLettered)",
            "outbox_depth": "\((try? store.outboxDepth().values.reduce(0, +)) ?? -1)",
        ])
        return reloader?.acceptedConfiguration.map(Exit.reload) ?? .stopped
    }
}

extension Logger {
    /// A copy with one more metadata value.
    public func with(_ key: String, _ value: String) -> Logger {
        var copy = self
        copy[metadataKey: key] = "\(value)"
        return copy
    }
}

/// The running gateway's parts that extensions (the admin API) read.
public struct GatewayParts: Sendable {
    /// The validated configuration.
    public let configuration: HeraldConfiguration
    /// This instance among those sharing the store.
    public let identity: InstanceIdentity
    /// The chat store.
    public let store: any GatewayStore
    /// Where async code runs the store's blocking calls.
    public let blocking: BlockingCalls
    /// Committed events for live tail clients.
    public let tap: EventTap
    /// Running totals.
    public let totals: IngestTotals
    /// Whether the router's commits are failing.
    public let commitHealth: CommitHealth
    /// Each source's connection state.
    public let sourceHealth: [(name: String, health: SourceHealth)]
    /// The clock.
    public let clock: any WallClock
    /// The metrics factory.
    public let metrics: any MetricsFactory
    /// The root logger.
    public let logger: Logger
}
