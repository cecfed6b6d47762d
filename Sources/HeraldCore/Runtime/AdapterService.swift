public import HeraldPluginAPI
public import ServiceLifecycle

/// Runs one adapter (source or sink) as a service: graceful shutdown raises the adapter's
/// ``ShutdownSignal``, so a source finishes its in-flight batch, acknowledges it and disconnects, and
/// a sink closes its connection.
public struct AdapterService: Service, CustomStringConvertible {
    let shutdown: ShutdownSignal
    let body: @Sendable () async throws -> Void
    /// `source NAME` or `sink NAME`: how the service lifecycle's log lines name it.
    public let description: String

    /// Runs a source with its context.
    public init(source: any SourceAdapter, context: SourceContext) {
        shutdown = context.shutdown
        body = { try await source.run(context: context) }
        description = "source \(source.name)"
    }

    /// Runs a sink's connection with its context.
    public init(sink: any SinkAdapter, context: SinkContext) {
        shutdown = context.shutdown
        body = { try await sink.run(context: context) }
        description = "sink \(sink.name)"
    }

    /// Runs the adapter until shutdown.
    public func run() async throws {
        let shutdown = shutdown
        try await withGracefulShutdownHandler {
            try await body()
        } onGracefulShutdown: {
            shutdown.trigger()
        }
    }
}
