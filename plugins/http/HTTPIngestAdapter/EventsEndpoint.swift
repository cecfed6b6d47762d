import Foundation
import HeraldPluginAPI
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// `POST {path}`: admits the request (in-flight limit, authentication, content type, body size), reads
/// its events, commits them with the other requests of the moment, and answers only once they are
/// durable: 202 with a result per item. Nothing is answered 202 that is not committed; a failed commit
/// is 503 with `Retry-After`, and the client sends the request again (duplicates are harmless).
final class EventsEndpoint: Sendable {
    let name: String
    let configuration: HTTPIngestConfiguration
    let authenticator: RequestAuthenticator
    let reader: HTTPBodyReader
    let committer: GroupCommitter
    let context: SourceContext
    let metrics: HTTPIngestMetrics
    private let inFlight = Atomic<Int>(0)
    private let failureLog = RateLimitedLog(intervalMilliseconds: 10_000)
    private let sequence = Atomic<Int>(0)

    init(name: String, configuration: HTTPIngestConfiguration, authenticator: RequestAuthenticator, reader: HTTPBodyReader,
         committer: GroupCommitter, context: SourceContext) {
        self.name = name
        self.configuration = configuration
        self.authenticator = authenticator
        self.reader = reader
        self.committer = committer
        self.context = context
        self.metrics = HTTPIngestMetrics(adapter: name, factory: context.metrics.factory)
    }

    static let requestIDHeader = HTTPField.Name("X-Request-ID")!
    static let webhookID = HTTPField.Name("webhook-id")!
    static let webhookTimestamp = HTTPField.Name("webhook-timestamp")!
    static let webhookSignature = HTTPField.Name("webhook-signature")!

    func handle(_ request: Request, context requestContext: IngestRequestContext) async -> Response {
        let started = ContinuousClock.now
        let requestID = request.headers[Self.requestIDHeader].map { String($0.prefix(64)) } ?? generatedID()
        let response = await answer(request, remote: requestContext.remoteAddress, requestID: requestID)
        metrics.answered(response.status.code)
        metrics.duration.recordNanoseconds((ContinuousClock.now - started).nanoseconds)
        var headers = response.headers
        headers[Self.requestIDHeader] = requestID
        return Response(status: response.status, headers: headers, body: response.body)
    }

    private func answer(_ request: Request, remote: SocketAddress?, requestID: String) async -> Response {
        let admitted = inFlight.wrappingAdd(1, ordering: .relaxed).newValue <= configuration.maxInFlight
        defer { inFlight.wrappingSubtract(1, ordering: .relaxed) }
        guard admitted else {
            return Self.refuse(.tooManyRequests, "more than \(configuration.maxInFlight) requests in flight; retry later", retryAfter: 1)
        }
        let credentials = RequestAuthenticator.Credentials(
            authorization: request.headers[.authorization], webhookID: request.headers[Self.webhookID],
            webhookTimestamp: request.headers[Self.webhookTimestamp], webhookSignature: request.headers[Self.webhookSignature])
        var authorized = !authenticator.isRequired
        if !authorized {
            // A valid token admits the request now; without one, only a signature (checked on the body) can.
            let token = authenticator.checkToken(credentials)
            if case .success? = token {
                authorized = true
            } else if !credentials.isSigned {
                if case .failure(let failure)? = token { return unauthorized(failure, remote: remote) }
                return unauthorized(.missing, remote: remote)
            }
        }
        guard let framing = HTTPBodyReader.Framing(contentType: request.headers[.contentType]) else {
            return Self.refuse(.unsupportedMediaType, "send application/json (an event or an array of events) or application/x-ndjson")
        }
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > configuration.maxBodyBytes {
            return tooLarge()
        }
        let body: [UInt8]
        switch await collect(request.body) {
        case .success(let bytes): body = bytes
        case .failure(.tooLarge): return tooLarge()
        case .failure(.timedOut):
            return Self.refuse(.requestTimeout, "the body did not arrive within \(Self.seconds(configuration.idleTimeoutSeconds)) s")
        case .failure(.broken): return Self.refuse(.badRequest, "the body could not be read")
        }
        let now = context.clock.now()
        if !authorized, case .failure(let failure) = authenticator.checkSignature(credentials, body: body, now: now) {
            return unauthorized(failure, remote: remote)
        }
        context.metrics.bytes.increment(by: Int64(body.count))
        let origin = "POST \(configuration.path) from \(Self.describe(remote)) request \(requestID)"
        let records: [SourceRecord]
        switch reader.read(body, framing: framing, origin: origin, receivedAt: now) {
        case .success(let read): records = read
        case .failure(let refusal): return Self.refuse(HTTPResponse.Status(code: refusal.status), refusal.message)
        }
        context.metrics.received.increment(by: Int64(records.count))
        switch await committer.commit(records) {
        case .success(let outcomes):
            return Response(status: .accepted, headers: [.contentType: "application/json"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: IngestResponse.committed(records, outcomes: outcomes))))
        case .failure(let error):
            if let suppressed = failureLog.admit(key: "commit", now: now) {
                context.logger.warning("Commit failed; answered 503 and nothing was accepted.", metadata: [
                    "error": "\(error)", "suppressed_since_last": "\(suppressed)",
                ])
            }
            return Self.refuse(.serviceUnavailable, "the store did not take the events; nothing was accepted; retry", retryAfter: 1)
        }
    }

    private enum BodyFailure: Error { case tooLarge, timedOut, broken }

    /// The whole body, at most `max_body_bytes`, within `idle_timeout_s` (a stalled client does not hold a slot).
    private func collect(_ body: RequestBody) async -> Result<[UInt8], BodyFailure> {
        let limit = configuration.maxBodyBytes
        let timeout = Duration.milliseconds(Int64(configuration.idleTimeoutSeconds * 1000))
        return await withTaskGroup(of: Result<[UInt8], BodyFailure>.self) { group in
            group.addTask {
                do {
                    let buffer = try await body.collect(upTo: limit)
                    return .success(Array(buffer.readableBytesView))
                } catch let error as HTTPError where error.status == .contentTooLarge {
                    return .failure(.tooLarge)
                } catch {
                    return .failure(.broken)
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return .failure(.timedOut)
            }
            let first = await group.next() ?? .failure(.broken)
            group.cancelAll()
            return first
        }
    }

    private func unauthorized(_ failure: RequestAuthenticator.Failure, remote: SocketAddress?) -> Response {
        if let suppressed = failureLog.admit(key: "auth", now: context.clock.now()) {
            context.logger.warning("Request refused: authentication failed.", metadata: [
                "reason": "\(failure.rawValue)", "remote": "\(Self.describe(remote))", "suppressed_since_last": "\(suppressed)",
            ])
        }
        var response = Self.refuse(.unauthorized, "missing or wrong bearer token or webhook signature")
        response.headers[.wwwAuthenticate] = "Bearer"
        return response
    }

    private func tooLarge() -> Response {
        Self.refuse(.contentTooLarge, "the body is larger than \(configuration.maxBodyBytes) bytes (max_body_bytes)")
    }

    static func refuse(_ status: HTTPResponse.Status, _ message: String, retryAfter: Int? = nil) -> Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let retryAfter { headers[.retryAfter] = "\(retryAfter)" }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: IngestResponse.refused(message))))
    }

    private func generatedID() -> String {
        let number = sequence.wrappingAdd(1, ordering: .relaxed).newValue
        return "\(name)-\(context.clock.now().milliseconds)-\(number)"
    }

    static func describe(_ address: SocketAddress?) -> String {
        guard let address, let ip = address.ipAddress, let port = address.port else { return "unknown" }
        return address.protocol == .inet6 ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value))" : "\(value)"
    }
}
