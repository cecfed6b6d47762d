import AsyncHTTPClient
import Foundation
public import HeraldPluginAPI
import NIOCore
import NIOSSL
import NIOHTTP1
import NetworkAdapterSupport
import Synchronization

/// POSTs outputs to webhook URLs, one request per output, signed the Standard Webhooks way. Each
/// recipient's outputs go in outbox order; up to `concurrency` recipients are served at once. The
/// `webhook-id` is the sink name and the outbox sequence, so every retry of an output carries the same
/// id and receivers can drop duplicates.
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
        // The outbox retries with its own jittered backoff; the client's own retries would hold a refused
        // connection for the whole connect timeout, and shutdown with it.
        clientConfiguration.connectionPool.retryConnectionEstablishment = false
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

    /// Posts the batch: each recipient's outputs in order, up to `concurrency` recipients at a time. Returns
    /// when everything is confirmed; otherwise throws for the first unconfirmed envelope in batch order (the
    /// ones after it may have been delivered already and are sent again later with the same `webhook-id`).
    public func deliver(_ batch: [OutboxEnvelope]) async throws(SinkError) -> Int {
        // Headers (and a token file) are read once per batch, not once per request.
        let headers: [(name: String, value: Secret)]
        do {
            headers = try configuration.auth.resolve()
        } catch {
            throw SinkError("\(error)")
        }
        var lanes: [UserID: [Int]] = [:]
        var order: [UserID] = []
        for (index, envelope) in batch.enumerated() {
            if lanes[envelope.recipient] == nil { order.append(envelope.recipient) }
            lanes[envelope.recipient, default: []].append(index)
        }
        var delivered = [Bool](repeating: false, count: batch.count)
        var failures: [Int: SinkError] = [:]
        await withTaskGroup(of: [(Int, SinkError?)].self) { group in
            var next = 0
            var running = 0
            while true {
                while next < order.count, running < configuration.concurrency {
                    let lane = (lanes[order[next]] ?? []).map { ($0, batch[$0]) }
                    next += 1
                    running += 1
                    group.addTask { await self.deliverLane(lane, headers: headers) }
                }
                guard let results = await group.next() else { break }
                running -= 1
                for (index, failure) in results {
                    if let failure { failures[index] = failure } else { delivered[index] = true }
                }
            }
        }
        guard let first = delivered.firstIndex(of: false) else { return batch.count }
        var failure = failures[first] ?? SinkError("not attempted")
        failure.confirmed = first
        throw failure
    }

    /// Delivers one recipient's envelopes in order, stopping at the first failure.
    private func deliverLane(_ lane: [(Int, OutboxEnvelope)], headers: [(name: String, value: Secret)]) async -> [(Int, SinkError?)] {
        var results: [(Int, SinkError?)] = []
        for (index, envelope) in lane {
            do {
                try await deliverOne(envelope, headers: headers)
                results.append((index, nil))
            } catch {
                results.append((index, error))
                break
            }
        }
        return results
    }

    /// One envelope: confirmed, or the reason it is not (retry later or dead-letter it).
    private func deliverOne(_ envelope: OutboxEnvelope, headers: [(name: String, value: Secret)]) async throws(SinkError) {
        guard let url = endpoints[envelope.kind] else { return }
        let lastAttempt = envelope.attempts + 1 >= configuration.maxAttempts
        if disabled.withLock({ $0.contains(url) }) {
            throw SinkError("\(url) answered 410 Gone earlier and is disabled until restart", undeliverable: true)
        }
        let status: Int
        let retryAfter: String?
        do {
            (status, retryAfter) = try await post(envelope, to: url, headers: headers)
        } catch {
            throw SinkError("POST \(url) failed: \(error)", undeliverable: lastAttempt)
        }
        switch status {
        case 200..<300:
            return
        case 410:
            disabled.withLock { _ = $0.insert(url) }
            logger.withLock { $0 }?.error("Webhook endpoint answered 410 Gone; disabled until restart, its outputs are dead-lettered.",
                                           metadata: ["sink": "\(name)", "url": "\(url)"])
            throw SinkError("\(url) answered 410 Gone", undeliverable: true)
        default:
            let delay = [429, 503].contains(status) ? RetryAfter.seconds(retryAfter) : nil
            throw SinkError("POST \(url) answered HTTP \(status)", retryAfterSeconds: delay, undeliverable: lastAttempt)
        }
    }

    /// One signed POST; returns the status and the `Retry-After` header.
    private func post(_ envelope: OutboxEnvelope, to url: String, headers: [(name: String, value: Secret)]) async throws -> (Int, String?) {
        let body = Self.body(for: envelope)
        let id = "\(name)-\(envelope.sequence)"
        let timestamp = Int64(Date().timeIntervalSince1970)
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        for header in headers { request.headers.replaceOrAdd(name: header.name, value: header.value.value) }
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
