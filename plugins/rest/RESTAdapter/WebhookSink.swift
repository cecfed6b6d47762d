import AsyncHTTPClient
import Foundation
public import HeraldPluginAPI
import NIOCore
import NIOSSL
import NIOHTTP1
import NetworkAdapterSupport
import Synchronization

/// POSTs outputs to webhook URLs, one request per output in outbox order, signed the Standard Webhooks
/// way. The `webhook-id` is the sink name and the outbox sequence, so every retry of an output carries
/// the same id and receivers can drop duplicates.
///
/// - 2xx confirms the output.
/// - 429 and 503 honour `Retry-After`; other failures are retried by the runtime with jittered backoff.
/// - After `max_attempts` failed attempts the output is dead-lettered.
/// - 410 Gone disables that URL until restart (logged as an error); its outputs are dead-lettered.
public final class WebhookSink: SinkAdapter {
    /// The configured instance name.
    public let name: String
    /// Kinds that have a URL.
    public let accepts: Set<OutputKind>
    let endpoints: [OutputKind: String]
    let signer: WebhookSigner
    let configuration: WebhookSinkConfiguration
    let client: HTTPClient
    private let disabled = Mutex<Set<String>>([])
    private let logger = Mutex<Logger?>(nil)

    init(name: String, endpoints: [OutputKind: String], signer: WebhookSigner, configuration: WebhookSinkConfiguration,
         tlsConfiguration: TLSConfiguration) {
        self.name = name
        self.endpoints = endpoints
        self.accepts = Set(endpoints.keys)
        self.signer = signer
        self.configuration = configuration
        let timeout = TimeAmount.milliseconds(Int64(configuration.requestTimeoutSeconds * 1000))
        var clientConfiguration = HTTPClient.Configuration(tlsConfiguration: tlsConfiguration,
                                                           timeout: .init(connect: timeout, read: timeout))
        clientConfiguration.redirectConfiguration = .disallow
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: clientConfiguration)
    }

    /// Waits for shutdown, then closes the HTTP client.
    public func run(context: SinkContext) async throws {
        logger.withLock { $0 = context.logger }
        if configuration.tls.insecureSkipVerify {
            context.logger.warning("TLS verification is OFF for this sink (insecure_skip_verify); never use this in production.")
        }
        await context.shutdown.wait()
        // The service group stops services in reverse order: this sink's dispatcher has drained by now.
        try? await client.shutdown()
    }

    /// Posts each envelope in order; stops at the first one that is not confirmed.
    public func deliver(_ batch: [OutboxEnvelope]) async throws(SinkError) -> Int {
        for (index, envelope) in batch.enumerated() {
            guard let url = endpoints[envelope.kind] else { continue }
            let lastAttempt = envelope.attempts + 1 >= configuration.maxAttempts
            if disabled.withLock({ $0.contains(url) }) {
                throw SinkError("\(url) answered 410 Gone earlier and is disabled until restart", confirmed: index, undeliverable: true)
            }
            let status: Int
            let retryAfter: String?
            do {
                (status, retryAfter) = try await post(envelope, to: url)
            } catch {
                throw SinkError("POST \(url) failed: \(error)", confirmed: index, undeliverable: lastAttempt)
            }
            switch status {
            case 200..<300:
                continue
            case 410:
                disabled.withLock { _ = $0.insert(url) }
                logger.withLock { $0 }?.error("Webhook endpoint answered 410 Gone; disabled until restart, its outputs are dead-lettered.",
                                               metadata: ["sink": "\(name)", "url": "\(url)"])
                throw SinkError("\(url) answered 410 Gone", confirmed: index, undeliverable: true)
            default:
                let delay = [429, 503].contains(status) ? RetryAfter.seconds(retryAfter) : nil
                throw SinkError("POST \(url) answered HTTP \(status)", retryAfterSeconds: delay, confirmed: index,
                                undeliverable: lastAttempt)
            }
        }
        return batch.count
    }

    /// One signed POST; returns the status and the `Retry-After` header.
    private func post(_ envelope: OutboxEnvelope, to url: String) async throws -> (Int, String?) {
        let body = Self.body(for: envelope)
        let id = "\(name)-\(envelope.sequence)"
        let timestamp = Int64(Date().timeIntervalSince1970)
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        for header in try configuration.auth.resolve() { request.headers.replaceOrAdd(name: header.name, value: header.value.value) }
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "herald")
        request.headers.add(name: "webhook-id", value: id)
        request.headers.add(name: "webhook-timestamp", value: String(timestamp))
        request.headers.add(name: "webhook-signature", value: signer.signature(id: id, timestamp: timestamp, body: body))
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await client.execute(request, timeout: .milliseconds(Int64(configuration.requestTimeoutSeconds * 1000)))
        _ = try? await response.body.collect(upTo: 64 * 1024)
        return (Int(response.status.code), response.headers.first(name: "Retry-After"))
    }

    /// `{"type":<kind>,"timestamp":<ms>,"data":<the output's client JSON>}`.
    static func body(for envelope: OutboxEnvelope) -> [UInt8] {
        Array("{\"type\":\"\(envelope.kind.rawValue)\",\"timestamp\":\(envelope.createdAt.milliseconds),\"data\":".utf8)
            + envelope.payload + [UInt8(ascii: "}")]
    }
}
