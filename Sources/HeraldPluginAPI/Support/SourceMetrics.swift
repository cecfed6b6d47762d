public import Metrics

/// The counters every source adapter maintains, named by the runtime so all adapters look alike
/// (`herald_source_received_total{adapter="…"}` and friends).
public struct SourceMetrics: Sendable {
    /// Inputs received (before normalisation).
    public let received: Counter
    /// Raw bytes received.
    public let bytes: Counter
    /// Connections (re)established.
    public let connects: Counter
    /// Connection failures.
    public let connectionFailures: Counter
    /// The injected factory, for metrics of an adapter's own (labelled with the same `adapter`).
    public let factory: any MetricsFactory

    /// Creates the counters for `adapter` from an injected factory.
    public init(adapter: String, factory: any MetricsFactory) {
        let dimensions = [("adapter", adapter)]
        self.factory = factory
        received = Counter(label: "herald_source_received_total", dimensions: dimensions, factory: factory)
        bytes = Counter(label: "herald_source_bytes_total", dimensions: dimensions, factory: factory)
        connects = Counter(label: "herald_source_connects_total", dimensions: dimensions, factory: factory)
        connectionFailures = Counter(label: "herald_source_connection_failures_total", dimensions: dimensions,
                                     factory: factory)
    }
}
