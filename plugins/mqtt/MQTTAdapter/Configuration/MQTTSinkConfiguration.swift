public import HeraldPluginAPI
import Mosquitto

/// The `type: mqtt` sink section.
public struct MQTTSinkConfiguration: SinkConfiguration, Decodable {
    /// Connection settings.
    public var connection: MQTTConnectionOptions
    /// Output kinds to publish (default: all).
    public var outputs: [OutputKind]
    /// Topic template per output kind; `{user}` is the recipient.
    public var topics: [String: String]
    /// Prefix for every topic.
    public var topicPrefix: String
    /// Publish badges retained.
    public var retainBadges: Bool
    /// How long to wait for PUBACKs before retrying, in seconds.
    public var ackTimeoutSeconds: Double
    /// Publishes awaiting their PUBACK at once (the client's send window).
    public var maxInflight: Int
    /// MQTT 5: seconds after which the broker drops an undelivered output, per output kind.
    public var messageExpirySeconds: [String: Int]
    /// MQTT 5: the content type sent with every output.
    public var contentType: String

    /// The default send window. libmosquitto walks its list of unacknowledged publishes on every
    /// publish and every PUBACK while the window has room, so a window as wide as the outbox batch
    /// (`outbox.batch_size`, 1000) costs time per output that grows with the batch; 64 took 11–16%
    /// less CPU per output than 1000 when an outage's backlog drained here, and delivered at least as
    /// fast. A distant broker needs a wider window: at most `max_inflight` outputs leave per round
    /// trip (and at most one outbox batch, which the sink awaits before the next).
    public static let defaultMaxInflight = 64

    enum CodingKeys: String, CodingKey {
        case outputs, topics, topicPrefix = "topic_prefix", retainBadges = "retain_badges", ackTimeoutSeconds = "ack_timeout_s"
        case maxInflight = "max_inflight", messageExpirySeconds = "message_expiry_s", contentType = "content_type"
    }

    /// Herald's default output topics.
    public static let defaultTopics: [OutputKind: String] = [
        .notification: "users/{user}/notifications", .liveMessage: "users/{user}/messages",
        .readReceipt: "users/{user}/receipts", .badge: "users/{user}/badge",
    ]

    /// Decodes the section.
    public init(from decoder: any Decoder) throws {
        connection = try MQTTConnectionOptions(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        outputs = try container.decodeIfPresent([OutputKind].self, forKey: .outputs) ?? OutputKind.allCases
        topics = try container.decodeIfPresent([String: String].self, forKey: .topics) ?? [:]
        topicPrefix = try container.decodeIfPresent(String.self, forKey: .topicPrefix) ?? ""
        retainBadges = try container.decodeIfPresent(Bool.self, forKey: .retainBadges) ?? true
        ackTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .ackTimeoutSeconds) ?? 10
        maxInflight = try container.decodeIfPresent(Int.self, forKey: .maxInflight) ?? Self.defaultMaxInflight
        messageExpirySeconds = try container.decodeIfPresent([String: Int].self, forKey: .messageExpirySeconds) ?? [:]
        contentType = try container.decodeIfPresent(String.self, forKey: .contentType) ?? "application/json"
    }

    /// Offline checks.
    public func validate() throws(ConfigurationError) {
        try connection.validate()
        _ = try templates()
        guard ackTimeoutSeconds > 0, ackTimeoutSeconds <= 300 else {
            throw ConfigurationError("must be between 0 and 300 seconds", keyPath: "ack_timeout_s")
        }
        guard (1...65_535).contains(maxInflight) else {
            throw ConfigurationError("must be between 1 and 65535", keyPath: "max_inflight")
        }
        _ = try publishProperties()
    }

    /// MQTT 5 properties per output kind (none on MQTT 3.1.1, which cannot carry them).
    func publishProperties() throws(ConfigurationError) -> [OutputKind: MosquittoPublishProperties] {
        for (key, seconds) in messageExpirySeconds {
            guard OutputKind(rawValue: key) != nil else {
                throw ConfigurationError("unknown output kind \"\(key)\"; use \(OutputKind.allCases.map(\.rawValue).joined(separator: ", "))",
                                         keyPath: "message_expiry_s.\(key)")
            }
            guard (1...Int(UInt32.max)).contains(seconds) else {
                throw ConfigurationError("must be between 1 and \(UInt32.max) seconds", keyPath: "message_expiry_s.\(key)")
            }
        }
        guard try connection.version() == .v5 else {
            if !messageExpirySeconds.isEmpty {
                throw ConfigurationError("message expiry needs protocol: 5", keyPath: "message_expiry_s")
            }
            return [:]
        }
        var properties: [OutputKind: MosquittoPublishProperties] = [:]
        for kind in OutputKind.allCases {
            properties[kind] = MosquittoPublishProperties(
                messageExpirySeconds: messageExpirySeconds[kind.rawValue].map { UInt32(clamping: $0) },
                contentType: contentType.isEmpty ? nil : contentType)
        }
        return properties
    }

    func templates() throws(ConfigurationError) -> [OutputKind: TopicTemplate] {
        var result: [OutputKind: TopicTemplate] = [:]
        for key in topics.keys where OutputKind(rawValue: key) == nil {
            throw ConfigurationError("unknown output kind \"\(key)\"; use \(OutputKind.allCases.map(\.rawValue).joined(separator: ", "))",
                                     keyPath: "topics.\(key)")
        }
        for kind in outputs {
            let text = topicPrefix + (topics[kind.rawValue] ?? Self.defaultTopics[kind] ?? "users/{user}/\(kind.rawValue)")
            do throws(ConfigurationError) {
                let template = try TopicTemplate(text)
                guard template.captureNames == ["user"] else {
                    throw ConfigurationError("output topics must contain exactly {user}")
                }
                result[kind] = template
            } catch {
                throw error.nested(under: "topics.\(kind.rawValue)")
            }
        }
        return result
    }

    /// Builds the sink.
    public func makeSink(name: String) throws(ConfigurationError) -> any SinkAdapter {
        var options = try connection.mosquittoOptions(cleanSession: true)
        options.maxInflight = maxInflight
        return MQTTSink(name: name, accepts: Set(outputs), options: options,
                 topics: try templates(), retainBadges: retainBadges,
                 ackTimeout: .milliseconds(Int64(ackTimeoutSeconds * 1000)), properties: try publishProperties())
    }
}
