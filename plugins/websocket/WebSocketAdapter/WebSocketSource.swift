import Foundation
import HTTPTypes
public import HeraldPluginAPI
import NetworkAdapterSupport
import NIOCore
import NIOSSL
import WSClient

/// Connects to a WebSocket event stream and keeps it connected: reconnects with the runtime's backoff
/// (full jitter, capped), resets it after a stable period, re-reads the token and sends the last
/// committed event id on every connect.
public struct WebSocketSource: SourceAdapter {
    /// The configured instance name.
    public let name: String
    let configuration: WebSocketSourceConfiguration
    let tlsConfiguration: TLSConfiguration
    let normaliser: WebSocketNormaliser
    /// `false` for `herald tail --source`: start from the stream's present, store nothing.
    let storesPosition: Bool

    static let checkpointKey = "last_event_id"

    /// Runs until shutdown.
    public func run(context: SourceContext) async throws {
        let ingest = AsyncIngest(context.ingest, label: name)
        var backoff = context.reconnect
        let guardRail = RepeatedRejectionGuard()
        if configuration.tls.insecureSkipVerify {
            context.logger.warning("TLS verification is OFF for this source (insecure_skip_verify); never use this in production.")
        }
        while !context.shutdown.isTriggered {
            let started = ContinuousClock.now
            let outcome: String
            do {
                let lastID = storesPosition ? try await ingest.checkpoint(source: name, key: Self.checkpointKey) : nil
                try await checkPins()
                let session = WebSocketSession(source: name, configuration: configuration, normaliser: normaliser, ingest: ingest,
                                               context: context, storesPosition: storesPosition, guardRail: guardRail)
                let url = connectURL(resumingAfter: lastID)
                let clientConfiguration = try clientConfiguration(resumingAfter: lastID)
                let tls = configuration.url.hasPrefix("wss:") ? tlsConfiguration : nil
                let logger = context.logger
                let close = try await runUntilShutdown(context: context) {
                    let client = WebSocketClient(url: url, configuration: clientConfiguration, tlsConfiguration: tls, logger: logger) { inbound, outbound, _ in
                        try await session.run(inbound: inbound, outbound: outbound)
                    }
                    return try await client.run()
                }
                outcome = "closed (\(close.map { "\($0.closeCode)" } ?? "no close frame"))\(session.closeReason.map { ": \($0)" } ?? "")"
            } catch {
                context.metrics.connectionFailures.increment()
                outcome = "failed: \(await explain(error))"
            }
            context.health.report(connected: false, at: context.clock.now())
            if context.shutdown.isTriggered { break }
            if ContinuousClock.now - started >= .milliseconds(Int64(configuration.stableAfterSeconds * 1000)) { backoff.reset() }
            let delay = backoff.nextDelaySeconds()
            context.logger.warning("WebSocket connection \(outcome); reconnecting.", metadata: [
                "url": "\(configuration.url)", "retry_in_s": "\(String(format: "%.2f", delay))",
            ])
            await context.shutdown.wait(timeout: .milliseconds(Int64(delay * 1000)))
        }
    }

    /// Runs the client; shutdown cancels a connect that is still under way.
    private func runUntilShutdown(context: SourceContext,
                                  _ connect: @escaping @Sendable () async throws -> WebSocketCloseFrame?) async throws -> WebSocketCloseFrame? {
        try await withThrowingTaskGroup(of: WebSocketCloseFrame?.self) { group in
            group.addTask { try await connect() }
            group.addTask {
                await context.shutdown.wait()
                // Give the session time to close cleanly and commit what it read.
                try await Task.sleep(for: .seconds(3))
                throw CancellationError()
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    func connectURL(resumingAfter lastID: String?) -> String {
        guard let lastID, let parameter = configuration.resume?.queryParam else { return configuration.url }
        return URLQuery.setting(parameter, to: lastID, in: configuration.url)
    }

    func clientConfiguration(resumingAfter lastID: String?) throws -> WebSocketClientConfiguration {
        var headers = HTTPFields()
        for header in try configuration.auth.resolve() {
            if let name = HTTPField.Name(header.name) { headers[name] = header.value.value }
        }
        if !configuration.subprotocols.isEmpty, let name = HTTPField.Name("Sec-WebSocket-Protocol") {
            headers[name] = configuration.subprotocols.joined(separator: ", ")
        }
        if let lastID, let header = configuration.resume?.header, let name = HTTPField.Name(header) { headers[name] = lastID }
        let ping = configuration.pingIntervalSeconds
        let period = min(ping, configuration.pongTimeoutSeconds ?? ping)
        // The NIO frame limit sits above the message limit, so an oversize message reaches the session,
        // which dead-letters it and closes with 1009 itself.
        var client = WebSocketClientConfiguration(
            maxFrameSize: max(configuration.maxMessageBytes * 2, 1 << 14), additionalHeaders: headers,
            autoPing: ping > 0 ? .enabled(timePeriod: .milliseconds(Int64(period * 1000))) : .disabled,
            validateUTF8: false, sniHostname: configuration.tls.serverName)
        // A server that does not answer our close frame is not waited for long (shutdown has a budget).
        client.closeTimeout = .seconds(2)
        return client
    }

    private func checkPins() async throws {
        let pins = configuration.tls.pins.compactMap(SPKIPin.init)
        guard !pins.isEmpty, let components = URLComponents(string: configuration.url), components.scheme == "wss",
              let host = components.host else { return }
        try await SPKIPinProbe.verify(host: host, port: components.port ?? 443, serverName: configuration.tls.serverName,
                                      configuration: tlsConfiguration, pins: pins)
    }

    /// A one-line reason for the log (certificate problems explained).
    func explain(_ error: any Error) async -> String {
        await TLSFailureDescription.describe(error, url: configuration.url, options: configuration.tls, configuration: tlsConfiguration)
    }
}
