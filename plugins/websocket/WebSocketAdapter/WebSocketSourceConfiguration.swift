import Foundation
public import HeraldPluginAPI
import NetworkAdapterSupport

/// The `type: websocket` source section: Herald connects as a client to a `wss://` (or, for
/// development, `ws://`) stream of chat events and resumes from the last committed event id.
public struct WebSocketSourceConfiguration: SourceConfiguration, Decodable {
    /// `wss://host/path` or `ws://host/path`.
    public var url: String
    /// Subprotocols offered in the handshake (`Sec-WebSocket-Protocol`).
    public var subprotocols: [String]
    /// A text message sent after every connect (a subscribe request).
    public var subscribe: String?
    /// Headers and token sent with the handshake; a token file is re-read on every connect.
    public var auth: HTTPAuthOptions
    /// TLS settings for `wss://`.
    public var tls: TLSClientOptions
    /// Seconds between WebSocket pings; 0 turns pings off.
    public var pingIntervalSeconds: Double
    /// Seconds a pong may take before the link is declared dead (at most the ping interval).
    public var pongTimeoutSeconds: Double?
    /// Application-level ping messages, for servers that want them instead of protocol pings.
    public var appPing: AppPingOptions?
    /// Larger messages are dead-lettered and the connection is closed with 1009.
    public var maxMessageBytes: Int
    /// Messages committed in one transaction at most.
    public var maxBatch: Int
    /// Seconds a connection must stay up before the reconnect backoff starts again from its base.
    public var stableAfterSeconds: Double
    /// How the stream's event ids are read and sent back on reconnect; `nil` when it has none.
    public var resume: ResumeOptions?
    /// What the messages are; `auto` reads each message's `type`.
    public var kind: PayloadKind
    /// Where fields sit in a message (JSON pointers).
    public var mapping: FieldMapping
    /// How times are read.
    public var timeFormat: TimeFormat

    enum CodingKeys: String, CodingKey {
        case url, subprotocols, subscribe, tls, pingIntervalSeconds = "ping_interval_s", pongTimeoutSeconds = "pong_timeout_s"
        case appPing = "app_ping", maxMessageBytes = "max_message_bytes", maxBatch = "max_batch"
        case stableAfterSeconds = "stable_after_s", resume, kind, mapping, timeFormat = "time_format"
    }

    /// Decodes the section.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        url = try container.decode(String.self, forKey: .url)
        subprotocols = try container.decodeIfPresent([String].self, forKey: .subprotocols) ?? []
        subscribe = try container.decodeIfPresent(String.self, forKey: .subscribe)
        auth = try HTTPAuthOptions(from: decoder)
        tls = try container.decodeIfPresent(TLSClientOptions.self, forKey: .tls) ?? TLSClientOptions()
        pingIntervalSeconds = try container.decodeIfPresent(Double.self, forKey: .pingIntervalSeconds) ?? 20
        pongTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .pongTimeoutSeconds)
        appPing = try container.decodeIfPresent(AppPingOptions.self, forKey: .appPing)
        maxMessageBytes = try container.decodeIfPresent(Int.self, forKey: .maxMessageBytes) ?? 64 * 1024
        maxBatch = try container.decodeIfPresent(Int.self, forKey: .maxBatch) ?? 500
        stableAfterSeconds = try container.decodeIfPresent(Double.self, forKey: .stableAfterSeconds) ?? 30
        resume = try container.decodeIfPresent(ResumeOptions.self, forKey: .resume)
        kind = try container.decodeIfPresent(PayloadKind.self, forKey: .kind) ?? .fromPayload
        mapping = try container.decodeIfPresent(FieldMapping.self, forKey: .mapping) ?? FieldMapping()
        timeFormat = try container.decodeIfPresent(TimeFormat.self, forKey: .timeFormat) ?? .auto
    }

    /// Offline checks.
    public func validate() throws(ConfigurationError) {
        guard let components = URLComponents(string: url), ["ws", "wss"].contains(components.scheme ?? ""),
              components.host?.isEmpty == false else {
            throw ConfigurationError("\"\(url)\" is not a wss:// or ws:// URL", keyPath: "url")
        }
        try auth.validate()
        try tls.validate()
        guard pingIntervalSeconds == 0 || pingIntervalSeconds >= 0.1 else {
            throw ConfigurationError("must be 0 (off) or at least 0.1", keyPath: "ping_interval_s")
        }
        if let pongTimeoutSeconds, pongTimeoutSeconds < 0.1 { throw ConfigurationError("must be at least 0.1", keyPath: "pong_timeout_s") }
        try appPing?.validate()
        guard (64...(64 << 20)).contains(maxMessageBytes) else {
            throw ConfigurationError("must be between 64 and 67108864", keyPath: "max_message_bytes")
        }
        guard (1...10_000).contains(maxBatch) else { throw ConfigurationError("must be between 1 and 10000", keyPath: "max_batch") }
        guard stableAfterSeconds >= 0 else { throw ConfigurationError("must be >= 0", keyPath: "stable_after_s") }
        try resume?.validate()
        try mapping.validatePointers(keyPath: "mapping")
    }

    /// One instance of a deployment consumes the upstream at a time (its cursor lives in the store).
    public var runsOncePerDeployment: Bool { true }

    /// Builds the source.
    public func makeSource(name: String) throws(ConfigurationError) -> any SourceAdapter {
        WebSocketSource(name: name, configuration: self, tlsConfiguration: try tls.makeConfiguration(), normaliser: normaliser(name),
                        storesPosition: true)
    }

    /// Builds the replay normaliser.
    public func makeReplayNormaliser(name: String) throws(ConfigurationError) -> any ReplayNormaliser { normaliser(name) }

    /// A throwaway connection to `url` for `herald tail --source`: it neither reads nor stores a position.
    public func makePreviewSource(name: String, url: String) throws(ConfigurationError) -> any SourceAdapter {
        var copy = self
        copy.url = url
        return WebSocketSource(name: name, configuration: copy, tlsConfiguration: try tls.makeConfiguration(),
                               normaliser: normaliser(name), storesPosition: false)
    }

    func normaliser(_ name: String) -> WebSocketNormaliser {
        WebSocketNormaliser(adapter: name, origin: url, kind: kind, idPointer: resume?.idPointer, appPong: appPing?.pong,
                            decoder: EventPayloadDecoder(maxPayloadBytes: maxMessageBytes, mapping: mapping, timeFormat: timeFormat))
    }
}
