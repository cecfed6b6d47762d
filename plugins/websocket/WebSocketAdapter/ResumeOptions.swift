import HeraldPluginAPI

/// How a WebSocket stream's event ids are read and handed back on reconnect.
public struct ResumeOptions: Decodable, Sendable, Hashable {
    /// JSON pointer to the event id in each message, e.g. `/event_id`.
    public var idPointer: String
    /// Query parameter that carries the last committed id on reconnect, e.g. `since`.
    public var queryParam: String?
    /// Header that carries it instead, e.g. `Last-Event-ID`.
    public var header: String?

    enum CodingKeys: String, CodingKey { case idPointer = "id_pointer", queryParam = "query_param", header }

    func validate() throws(ConfigurationError) {
        guard idPointer.hasPrefix("/") else { throw ConfigurationError("must be a JSON pointer like /event_id", keyPath: "resume.id_pointer") }
        switch (queryParam, header) {
        case (nil, nil): throw ConfigurationError("say how the id goes back: query_param or header", keyPath: "resume")
        case (.some, .some): throw ConfigurationError("set query_param or header, not both", keyPath: "resume.header")
        default: break
        }
    }
}

/// Application-level keepalive: a text message sent at an interval; when nothing at all arrives within
/// the timeout after it, the link is declared dead. Replies that match `pong` are not events.
public struct AppPingOptions: Decodable, Sendable, Hashable {
    /// The text sent, e.g. `{"type":"ping"}`.
    public var message: String
    /// Seconds between pings.
    public var intervalSeconds: Double
    /// Seconds to wait for any message after a ping.
    public var timeoutSeconds: Double
    /// How replies are recognised: JSON pointer and value, e.g. `/type` = `pong`.
    public var pong: PongMatch

    /// A reply matcher.
    public struct PongMatch: Decodable, Sendable, Hashable {
        /// JSON pointer into the reply.
        public var pointer: String
        /// The string value that marks a reply.
        public var value: String
    }

    enum CodingKeys: String, CodingKey { case message, intervalSeconds = "interval_s", timeoutSeconds = "timeout_s", pong }

    /// Decodes the block.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        message = try container.decode(String.self, forKey: .message)
        intervalSeconds = try container.decodeIfPresent(Double.self, forKey: .intervalSeconds) ?? 15
        timeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .timeoutSeconds) ?? 10
        pong = try container.decodeIfPresent(PongMatch.self, forKey: .pong) ?? PongMatch(pointer: "/type", value: "pong")
    }

    func validate() throws(ConfigurationError) {
        guard intervalSeconds >= 0.1 else { throw ConfigurationError("must be at least 0.1", keyPath: "app_ping.interval_s") }
        guard timeoutSeconds >= 0.1 else { throw ConfigurationError("must be at least 0.1", keyPath: "app_ping.timeout_s") }
        guard pong.pointer.hasPrefix("/") else { throw ConfigurationError("must be a JSON pointer", keyPath: "app_ping.pong.pointer") }
    }
}
