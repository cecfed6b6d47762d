public import Logging

/// A way events enter Herald (MQTT, WebSocket, REST polling, …).
///
/// Requirements:
/// - `run(context:)` keeps the adapter's connection(s) open, reconnecting on failure with the runtime's
///   policy, ``SourceContext/reconnect`` (exponential backoff, full jitter), and commits what it receives
///   through ``SourceContext/ingest``.
/// - It acknowledges upstream only after ``IngestHandle/commit(_:)`` returned for those records.
/// - Bad input is never dropped silently and never stops the adapter: it becomes a
///   ``SourceRecord/Outcome/rejected(_:)`` record.
/// - When ``SourceContext/shutdown`` fires it stops taking new input, commits and acknowledges what is
///   in flight, disconnects, and returns. It never commits after returning.
/// - Events carry no source information; topic, URL and sizes go in ``Provenance``.
/// - It reports connection changes to ``SourceContext/health``.
public protocol SourceAdapter: Sendable {
    /// The configured instance name (unique among sources).
    var name: String { get }
    /// Runs until shutdown is requested; throws only for failures that retrying cannot fix.
    func run(context: SourceContext) async throws
}

/// What the runtime gives a running source.
public struct SourceContext: Sendable {
    /// Commits batches of records.
    public var ingest: any IngestHandle
    /// A logger labelled with the adapter's name.
    public var logger: Logger
    /// Counters every source maintains.
    public var metrics: SourceMetrics
    /// Fires once when the gateway starts shutting down.
    public var shutdown: ShutdownSignal
    /// The clock for provenance timestamps.
    public var clock: any WallClock
    /// Where the adapter reports whether its upstream connection is up (for readiness).
    public var health: SourceHealth
    /// The runtime's reconnect policy; copy it, call `nextDelaySeconds()` after each failure and `reset()`
    /// after a stable connection, so every adapter backs off the same way.
    public var reconnect: Backoff

    /// Creates a context.
    public init(ingest: any IngestHandle, logger: Logger, metrics: SourceMetrics, shutdown: ShutdownSignal,
                clock: any WallClock, health: SourceHealth? = nil, reconnect: Backoff = Backoff(baseSeconds: 0.2, capSeconds: 30)) {
        self.ingest = ingest
        self.logger = logger
        self.metrics = metrics
        self.shutdown = shutdown
        self.clock = clock
        self.health = health ?? SourceHealth(now: clock.now())
        self.reconnect = reconnect
    }
}
