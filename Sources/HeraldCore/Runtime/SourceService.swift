public import HeraldPluginAPI
public import ServiceLifecycle

/// Runs one source adapter as a service: graceful shutdown raises the adapter's ``ShutdownSignal``,
/// so it finishes its in-flight batch, acknowledges it and disconnects.
public struct SourceService: Service {
    let source: any SourceAdapter
    let context: SourceContext

    /// Creates the service.
    public init(source: any SourceAdapter, context: SourceContext) {
        self.source = source
        self.context = context
    }

    /// Runs the adapter until shutdown.
    public func run() async throws {
        let shutdown = context.shutdown
        try await withGracefulShutdownHandler {
            try await source.run(context: context)
        } onGracefulShutdown: {
            shutdown.trigger()
        }
    }
}

/// Runs one sink adapter's connection as a service.
public struct SinkService: Service {
    let sink: any SinkAdapter
    let context: SinkContext

    /// Creates the service.
    public init(sink: any SinkAdapter, context: SinkContext) {
        self.sink = sink
        self.context = context
    }

    /// Runs the sink until shutdown.
    public func run() async throws {
        let shutdown = context.shutdown
        try await withGracefulShutdownHandler {
            try await sink.run(context: context)
        } onGracefulShutdown: {
            shutdown.trigger()
        }
    }
}
