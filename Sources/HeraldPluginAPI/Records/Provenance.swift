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
    /// type, for instance). Shown by tail and in logs; never used for routing.
    public var attributes: [String: String]

    /// Creates a provenance value.
    public init(adapter: String, origin: String, rawSize: Int, receivedAt: Timestamp, attributes: [String: String] = [:]) {
        self.adapter = adapter
        self.origin = origin
        self.rawSize = rawSize
        self.receivedAt = receivedAt
        self.attributes = attributes
    }

    enum CodingKeys: String, CodingKey { case adapter, origin, rawSize, receivedAt, attributes }

    /// Decodes a provenance; `attributes` may be absent.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        adapter = try container.decode(String.self, forKey: .adapter)
        origin = try container.decode(String.self, forKey: .origin)
        rawSize = try container.decode(Int.self, forKey: .rawSize)
        receivedAt = try container.decode(Timestamp.self, forKey: .receivedAt)
        attributes = try container.decodeIfPresent([String: String].self, forKey: .attributes) ?? [:]
    }

    /// Encodes a provenance; empty `attributes` are left out.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(adapter, forKey: .adapter)
        try container.encode(origin, forKey: .origin)
        try container.encode(rawSize, forKey: .rawSize)
        try container.encode(receivedAt, forKey: .receivedAt)
        if !attributes.isEmpty { try container.encode(attributes, forKey: .attributes) }
    }
}
