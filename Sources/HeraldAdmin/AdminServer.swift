import Foundation
public import HeraldCore
import HeraldPluginAPI
import Hummingbird
public import Prometheus
public import ServiceLifecycle

/// The admin API as a service: health, readiness, Prometheus metrics, the live tail (SSE) and store
/// queries, on `admin.listen` (loopback by default). With a token configured, every endpoint but
/// `/healthz` requires `Authorization: Bearer TOKEN`.
///
/// | endpoint | what |
/// |---|---|
/// | `GET /healthz` | 200 while the process runs |
/// | `GET /readyz` | 200 when the store is writable and every source is connected or within its reconnect budget; the body says which are not |
/// | `GET /metrics` | Prometheus text |
/// | `GET /v1/tail` | Server-Sent Events of committed events, filtered on the server |
/// | `GET /v1/status` | a one-screen summary as JSON |
/// | `GET /v1/users/{user}/badge` | the user's badge |
/// | `GET /v1/chats/{chat}/messages?limit=` | the newest messages of a chat |
/// | `GET /v1/dlq?limit=` | dead-lettered inputs |
public struct AdminServer: Service, CustomStringConvertible {
    let parts: GatewayParts
    let registry: PrometheusCollectorRegistry
    let token: String?

    /// Creates the server over a running gateway's parts.
    public init(parts: GatewayParts, registry: PrometheusCollectorRegistry) throws {
        self.parts = parts
        self.registry = registry
        self.token = try parts.configuration.admin.resolvedToken()
    }

    /// How the service lifecycle's log lines name it: the address, never the configuration and its secrets.
    public var description: String { "admin API on \(parts.configuration.admin.listen)" }

    /// Serves until shutdown; open tail streams are closed first so shutdown is not held up.
    public func run() async throws {
        let admin = parts.configuration.admin
        guard let (host, port) = admin.hostAndPort else { return }
        let router = Router(context: AdminRequestContext.self)
        router.add(middleware: BearerTokenMiddleware(token: token, limiter: FailedAttemptLimiter(), clock: parts.clock))
        AdminRoutes(parts: parts, registry: registry, state: AdminState(parts: parts)).register(on: router)
        var logger = parts.logger
        logger[metadataKey: "component"] = "admin"
        let tokenState = token == nil ? "none" : "required"
        let application = Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "herald"),
            onServerRunning: { [logger] _ in
                logger.info("Admin API listening.", metadata: ["address": "\(host):\(port)", "token": "\(tokenState)"])
            },
            logger: logger)
        let tap = parts.tap
        do {
            try await withGracefulShutdownHandler {
                try await application.run()
            } onGracefulShutdown: {
                tap.closeAll()
            }
        } catch {
            throw AdminServerError(address: "\(host):\(port)", underlying: "\(error)")
        }
    }
}

/// Requires `Authorization: Bearer TOKEN` on every path but `/healthz` when a token is set. Tokens are
/// compared in constant time; a client that fails `limiter.limit` times within its window is answered
/// 429 with `Retry-After` until the window ends.
struct BearerTokenMiddleware: RouterMiddleware {
    typealias Context = AdminRequestContext
    let token: String?
    let limiter: FailedAttemptLimiter
    let clock: any WallClock

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let token, request.uri.path != "/healthz" else { return try await next(request, context) }
        let client = context.remoteAddress?.ipAddress ?? "unknown"
        let now = clock.now().milliseconds
        if let wait = limiter.retryAfter(client: client, now: now) {
            return Response(status: .tooManyRequests, headers: [.contentType: "application/json", .retryAfter: "\(wait)"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"error":"too many failed token checks; wait and retry"}"#)))
        }
        let header = request.headers[.authorization] ?? ""
        guard header.hasPrefix("Bearer "), ConstantTime.equal(header.utf8.dropFirst(7), token.utf8) else {
            limiter.recordFailure(client: client, now: now)
            return Response(status: .unauthorized, headers: [.contentType: "application/json", .wwwAuthenticate: "Bearer"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"error":"missing or wrong bearer token"}"#)))
        }
        return try await next(request, context)
    }

}

/// The admin API could not serve (most often: the address is taken).
public struct AdminServerError: Error, CustomStringConvertible {
    /// `host:port`.
    public var address: String
    /// What the server library said.
    public var underlying: String

    /// An actionable sentence.
    public var description: String {
        "the admin API cannot listen on \(address) (\(underlying)); is another Herald running? Change admin.listen or set admin.enabled: false"
    }
}
