import Foundation
public import HeraldPluginAPI
import NetworkAdapterSupport

/// The `type: http` source section: an HTTP server that backends POST events to, answered only after
/// the events are committed.
public struct HTTPIngestConfiguration: SourceConfiguration, Decodable {
    /// `host:port` to listen on; loopback by default.
    public var listen: String
    /// The path events are POSTed to.
    public var path: String
    /// Accepted bearer tokens (several, so they can be rotated); use `${ENV_VAR}`.
    public var tokens: [Secret]
    /// A file of accepted bearer tokens, one per line.
    public var tokenFile: String?
    /// Standard Webhooks secret (`whsec_<base64>` or text) whose signatures are accepted.
    public var webhookSecret: Secret?
    /// A file holding the webhook secret.
    public var webhookSecretFile: String?
    /// How far a signed request's `webhook-timestamp` may be from now, in seconds.
    public var signatureToleranceSeconds: Double
    /// TLS for the listener: certificate, key, and optionally the CA that client certificates must chain to.
    public var tls: HTTPServerTLSOptions?
    /// Largest request body accepted (413 above it).
    public var maxBodyBytes: Int
    /// Most events in one request (413 above it).
    public var maxEventsPerRequest: Int
    /// Requests handled at once; more are answered 429 with `Retry-After`.
    public var maxInFlight: Int
    /// Largest single event; a larger one is dead-lettered as `oversize`.
    public var maxPayloadBytes: Int
    /// Most records in one commit; concurrent requests are committed together up to this.
    public var maxBatch: Int
    /// Seconds a connection may stay idle (a slow or stalled client is disconnected).
    public var idleTimeoutSeconds: Double
    /// What the events are (`auto`: each names its `type`).
    public var kind: PayloadKind
    /// JSON pointers for events in another shape.
    public var mapping: FieldMapping
    /// How times are read.
    public var timeFormat: TimeFormat

    enum CodingKeys: String, CodingKey {
        case listen, path, tokens, tokenFile = "token_file", webhookSecret = "webhook_secret"
        case webhookSecretFile = "webhook_secret_file", signatureToleranceSeconds = "signature_tolerance_s", tls
        case maxBodyBytes = "max_body_bytes", maxEventsPerRequest = "max_events_per_request", maxInFlight = "max_in_flight"
        case maxPayloadBytes = "max_payload_bytes", maxBatch = "max_batch", idleTimeoutSeconds = "idle_timeout_s"
        case kind, mapping, timeFormat = "time_format"
    }

    /// The default address.
    public static let defaultListen = "127.0.0.1:9480"

    /// Decodes the section.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        listen = try container.decodeIfPresent(String.self, forKey: .listen) ?? Self.defaultListen
        path = try container.decodeIfPresent(String.self, forKey: .path) ?? "/v1/events"
        tokens = try container.decodeIfPresent([Secret].self, forKey: .tokens) ?? []
        tokenFile = try container.decodeIfPresent(String.self, forKey: .tokenFile)
        webhookSecret = try container.decodeIfPresent(Secret.self, forKey: .webhookSecret)
        webhookSecretFile = try container.decodeIfPresent(String.self, forKey: .webhookSecretFile)
        signatureToleranceSeconds = try container.decodeIfPresent(Double.self, forKey: .signatureToleranceSeconds) ?? 300
        tls = try container.decodeIfPresent(HTTPServerTLSOptions.self, forKey: .tls)
        maxBodyBytes = try container.decodeIfPresent(Int.self, forKey: .maxBodyBytes) ?? 1 << 20
        maxEventsPerRequest = try container.decodeIfPresent(Int.self, forKey: .maxEventsPerRequest) ?? 1000
        maxInFlight = try container.decodeIfPresent(Int.self, forKey: .maxInFlight) ?? 64
        maxPayloadBytes = try container.decodeIfPresent(Int.self, forKey: .maxPayloadBytes) ?? 64 * 1024
        maxBatch = try container.decodeIfPresent(Int.self, forKey: .maxBatch) ?? 5000
        idleTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .idleTimeoutSeconds) ?? 30
        kind = try container.decodeIfPresent(PayloadKind.self, forKey: .kind) ?? .fromPayload
        mapping = try container.decodeIfPresent(FieldMapping.self, forKey: .mapping) ?? FieldMapping()
        timeFormat = try container.decodeIfPresent(TimeFormat.self, forKey: .timeFormat) ?? .auto
    }

    /// The webhook secret, inline or from its file.
    var signingSecret: WebhookSecretSetting { WebhookSecretSetting(value: webhookSecret, file: webhookSecretFile, key: "webhook_secret") }

    /// `listen` split into host and port, or `nil` when it is not `host:port`.
    public var hostAndPort: (host: String, port: Int)? { ListenAddress(listen).map { ($0.host, $0.port) } }

    /// Whether the listener is reachable from this machine only.
    public var isLoopback: Bool { ListenAddress(listen)?.isLoopback ?? false }

    /// Offline checks.
    public func validate() throws(ConfigurationError) {
        guard hostAndPort != nil else { throw ConfigurationError("\"\(listen)\" is not host:port", keyPath: "listen") }
        guard path.hasPrefix("/"), !path.contains("?") else { throw ConfigurationError("must start with / and hold no query", keyPath: "path") }
        if tokens.contains(where: \.value.isEmpty) { throw ConfigurationError("a token is empty (is its ${VAR} set?)", keyPath: "tokens") }
        if let tokenFile, !FileManager.default.isReadableFile(atPath: tokenFile) {
            throw ConfigurationError("cannot read \(tokenFile)", keyPath: "token_file")
        }
        try signingSecret.validate(required: false)
        let authenticated = !tokens.isEmpty || tokenFile != nil || signingSecret.isSet
        if !authenticated, !isLoopback {
            throw ConfigurationError("listening on \(listen) (not loopback) requires authentication: set tokens, token_file, "
                                     + "webhook_secret or webhook_secret_file", keyPath: "listen")
        }
        guard signatureToleranceSeconds > 0 else { throw ConfigurationError("must be > 0", keyPath: "signature_tolerance_s") }
        try tls?.validate()
        guard (64...(256 << 20)).contains(maxBodyBytes) else {
            throw ConfigurationError("must be between 64 and 268435456", keyPath: "max_body_bytes")
        }
        guard (1...100_000).contains(maxEventsPerRequest) else {
            throw ConfigurationError("must be between 1 and 100000", keyPath: "max_events_per_request")
        }
        guard (1...10_000).contains(maxInFlight) else { throw ConfigurationError("must be between 1 and 10000", keyPath: "max_in_flight") }
        guard (64...(64 << 20)).contains(maxPayloadBytes) else {
            throw ConfigurationError("must be between 64 and 67108864", keyPath: "max_payload_bytes")
        }
        guard (1...100_000).contains(maxBatch) else { throw ConfigurationError("must be between 1 and 100000", keyPath: "max_batch") }
        guard idleTimeoutSeconds > 0 else { throw ConfigurationError("must be > 0", keyPath: "idle_timeout_s") }
        try mapping.validatePointers(keyPath: "mapping")
    }

    /// Builds the source (reads the token and secret files; does not listen yet).
    public func makeSource(name: String) throws(ConfigurationError) -> any SourceAdapter {
        HTTPIngestSource(name: name, configuration: self, authenticator: try makeAuthenticator(),
                         tlsConfiguration: try tls?.makeConfiguration(), reader: reader(name))
    }

    /// The reader doubles as the replay normaliser: a dead-lettered item is one event's bytes.
    public func makeReplayNormaliser(name: String) throws(ConfigurationError) -> any ReplayNormaliser { reader(name) }

    func reader(_ name: String) -> HTTPBodyReader {
        HTTPBodyReader(adapter: name, kind: kind, maxEvents: maxEventsPerRequest,
                       decoder: EventPayloadDecoder(maxPayloadBytes: maxPayloadBytes, mapping: mapping, timeFormat: timeFormat))
    }

    func makeAuthenticator() throws(ConfigurationError) -> RequestAuthenticator {
        var accepted = tokens
        if let tokenFile {
            guard let text = try? String(contentsOfFile: tokenFile, encoding: .utf8) else {
                throw ConfigurationError("cannot read \(tokenFile)", keyPath: "token_file")
            }
            accepted += text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.map(Secret.init)
        }
        return RequestAuthenticator(tokens: accepted, signer: try signingSecret.signer(),
                                    toleranceMilliseconds: Int64(signatureToleranceSeconds * 1000))
    }
}
