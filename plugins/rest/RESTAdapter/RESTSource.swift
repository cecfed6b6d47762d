import AsyncHTTPClient
public import HeraldPluginAPI
import NetworkAdapterSupport
import NIOCore
import NIOSSL

/// Polls REST endpoints for new chat events. Each endpoint runs its own loop; pages are committed one
/// at a time together with the endpoint's cursor and validators, so a restart resumes exactly.
public struct RESTSource: SourceAdapter {
    /// The configured instance name.
    public let name: String
    let configuration: RESTSourceConfiguration
    let tlsConfiguration: TLSConfiguration
    let readers: [RESTPageReader]

    /// Runs every endpoint until shutdown.
    public func run(context: SourceContext) async throws {
        var clientConfiguration = HTTPClient.Configuration(
            tlsConfiguration: tlsConfiguration,
            timeout: .init(connect: .milliseconds(Int64(configuration.connectTimeoutSeconds * 1000)),
                           read: .milliseconds(Int64(configuration.requestTimeoutSeconds * 1000))))
        clientConfiguration.redirectConfiguration = .follow(max: 5, allowCycles: false)
        // The poller retries with its own backoff, and readiness should see a refused connection at once.
        clientConfiguration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: clientConfiguration,
                                backgroundActivityLogger: context.logger)
        if configuration.tls.insecureSkipVerify {
            context.logger.warning("TLS verification is OFF for this source (insecure_skip_verify); never use this in production.")
        }
        let ingest = AsyncIngest(context.ingest, label: name)
        let health = EndpointHealth(count: readers.count, report: { up in context.health.report(connected: up, at: context.clock.now()) })
        await withTaskGroup(of: Void.self) { group in
            for (index, reader) in readers.enumerated() {
                let poller = RESTPoller(source: name, reader: reader, configuration: configuration, client: client,
                                        tlsConfiguration: tlsConfiguration,
                                        ingest: ingest, context: context, health: { health.set(index, up: $0) })
                group.addTask { await poller.run() }
            }
            group.addTask {
                await context.shutdown.wait()
            }
            await group.next()
            if context.shutdown.isTriggered { group.cancelAll() }
            await group.waitForAll()
        }
        try? await client.shutdown()
        context.health.report(connected: false, at: context.clock.now())
    }
}
