/// Where and when a record entered Herald. It travels *beside* an event, for logs, metrics and the
/// dead-letter queue, and never into routing decisions.
public struct Provenance: Hashable, Codable, Sendable {
    /// The configured name of the source adapter instance.
    public var adapter: String
    /// The adapter-specific origin: an MQTT topic, a URL, a stream name.
    public var origin: String
    /// Size of the raw payload in bytes.
    public var rawSize: Int
    /// When the adapter received it.
    public var receivedAt: Timestamp
    /// What the transport said about the input beside its bytes (MQTT 5 user properties and content
    /// type, for instance). Shown by `herald tail --json`; never used for routing.
    public var attributes: [String: String]

    /// Creates a provenance value.
    public init(adapter: String, origin: String, rawSize: Int, receivedAt: Timestamp, attributes: [String: String] = [:]) {
        self.adapter = adapter
        self.origin = origin
        self.rawSize = rawSize
        self.receivedAt = receivedAt
        self.attributes = attributes
    }
}
