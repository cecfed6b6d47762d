import Foundation
public import HeraldPluginAPI
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle

/// Listens for backends that POST events (`type: http`), and answers each request only after its
/// events are committed. Listening counts as connected for readiness; a listener that cannot bind
/// (the port is taken) is retried with the runtime's backoff.
public struct HTTPIngestSource: SourceAdapter {
    /// The configured instance name.
    public let name: String
    let configuration: HTTPIngestConfiguration
    let authenticator: RequestAuthenticator
    let tlsConfiguration: TLSConfiguration?
    let reader: HTTPBodyReader

    /// Serves until shutdown: stops taking requests, answers those in flight (their commits included), returns.
    public func run(context: SourceContext) async throws {
        guard let (host, port) = configuration.hostAndPort else { return }
        if !authenticator.isRequired {
            context.logger.warning("HTTP source accepts requests without authentication (loopback only); set tokens or webhook_secret.")
        }
        var backoff = context.reconnect
        while !context.shutdown.isTriggered {
            do {
                try await serve(host: host, port: port, context: context)
                return
            } catch {
                context.metrics.connectionFailures.increment()
                context.health.report(connected: false, at: context.clock.now())
                let delay = backoff.nextDelaySeconds()
                context.logger.warning("HTTP source cannot listen; retrying.", metadata: [
                    "listen": "\(configuration.listen)", "error": "\(error)", "retry_in_s": "\(String(format: "%.2f", delay))",
                ])
                await context.shutdown.wait(timeout: .milliseconds(Int64(delay * 1000)))
            }
        }
    }

    private func serve(host: String, port: Int, context: SourceContext) async throws {
        let committer = GroupCommitter(maxBatch: configuration.maxBatch)
        let endpoint = EventsEndpoint(name: name, configuration: configuration, authenticator: authenticator, reader: reader,
                                      committer: committer, context: context)
        let router = Router(context: IngestRequestContext.self)
        router.post(RouterPath(configuration.path)) { request, requestContext in
            await endpoint.handle(request, context: requestContext)
        }
        // The connection may idle five seconds longer than a body may take, so a stalled body is answered 408
        // before the connection is dropped, even on a loaded machine where the 408 is written late.
        let idle = TimeAmount.milliseconds(Int64(configuration.idleTimeoutSeconds * 1000) + 5000)
        let http1 = HTTPServerBuilder.http1(configuration: .init(idleTimeout: idle))
        let server = try tlsConfiguration.map { try HTTPServerBuilder.tls(http1, tlsConfiguration: $0) } ?? http1
        let logger = context.logger
        let scheme = tlsConfiguration == nil ? "http" : "https"
        let application = Application(
            router: router, server: server,
            configuration: .init(address: .hostname(host, port: port), serverName: "herald"),
            onServerRunning: { [configuration] _ in
                context.metrics.connects.increment()
                context.health.report(connected: true, at: context.clock.now())
                logger.info("HTTP source listening.", metadata: [
                    "url": "\(scheme)://\(configuration.listen)\(configuration.path)",
                    "auth": "\(authenticator.isRequired ? "required" : "none")",
                ])
            },
            logger: logger)
        let group = ServiceGroup(configuration: .init(services: [.init(service: application)], gracefulShutdownSignals: [], logger: logger))
        let ingest = AsyncIngest(context.ingest, label: name)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { await committer.run(ingest: ingest) }
            tasks.addTask {
                await context.shutdown.wait()
                await group.triggerGracefulShutdown()
            }
            // The server returns once every request in flight is answered, or when it cannot bind.
            var failure: (any Error)?
            do { try await group.run() } catch { failure = error }
            context.health.report(connected: false, at: context.clock.now())
            committer.finish()
            tasks.cancelAll()
            if let failure { throw failure }
        }
    }
}
