public import HeraldPluginAPI

/// The `type: mqtt` source section.
public struct MQTTSourceConfiguration: SourceConfiguration, Decodable {
    /// Connection settings.
    public var connection: MQTTConnectionOptions
    /// Prefix for every topic template (e.g. `tenant1/`).
    public var topicPrefix: String
    /// The subscriptions; defaults to Herald's layout.
    public var subscriptions: [MQTTSubscription]
    /// Payloads above this many bytes are dead-lettered unparsed.
    public var maxPayloadBytes: Int
    /// The most messages read before one group commit.
    public var maxBatch: Int
    /// Under a steady load, the shortest time between the starts of two commits, in milliseconds; 0
    /// commits every burst as soon as the store is free.
    public var commitIntervalMilliseconds: Int
    /// MQTT shared subscription group (`$share/GROUP/…`), for several instances behind one broker.
    public var shareGroup: String?

    /// `max_batch` unless configured. Larger commits write fewer database pages per message: measured with
    /// the bench's 200,000-message backlog, 8,000 drained it 6–15% faster than 3,000 (49,200–53,700 against
    /// 46,500 msg/s), with the same live rate, publish→commit p99 and, with the store's 4 MiB cache, peak RSS.
    public static let defaultMaxBatch = 8000

    /// `commit_interval_ms` unless configured. Measured with the bench's paced load (direct chats, SQLite with
    /// `durability: full`): at 2,000 msg/s Herald's CPU per message is 154 µs with 2 ms, 277 µs with 0 and
    /// 123 µs with 5 (outputs queued); with the sink delivering, publish→notification p99 is 4.7 ms with 2,
    /// 4.9 ms with 0 and 8.2 ms with 5. At 200 msg/s nothing waits.
    public static let defaultCommitIntervalMilliseconds = 2

    enum CodingKeys: String, CodingKey {
        case topicPrefix = "topic_prefix", subscriptions, maxPayloadBytes = "max_payload_bytes", maxBatch = "max_batch"
        case commitIntervalMilliseconds = "commit_interval_ms", shareGroup = "share_group"
    }

    /// Decodes the section.
    public init(from decoder: any Decoder) throws {
        connection = try MQTTConnectionOptions(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        topicPrefix = try container.decodeIfPresent(String.self, forKey: .topicPrefix) ?? ""
        subscriptions = try container.decodeIfPresent([MQTTSubscription].self, forKey: .subscriptions) ?? MQTTSubscription.defaults
        maxPayloadBytes = try container.decodeIfPresent(Int.self, forKey: .maxPayloadBytes) ?? 64 * 1024
        maxBatch = try container.decodeIfPresent(Int.self, forKey: .maxBatch) ?? Self.defaultMaxBatch
        commitIntervalMilliseconds = try container.decodeIfPresent(Int.self, forKey: .commitIntervalMilliseconds)
            ?? Self.defaultCommitIntervalMilliseconds
        shareGroup = try container.decodeIfPresent(String.self, forKey: .shareGroup)
    }

    /// Offline checks: URL, client id, files, templates, limits.
    public func validate() throws(ConfigurationError) {
        try connection.validate()
        guard !subscriptions.isEmpty else { throw ConfigurationError("at least one subscription is needed", keyPath: "subscriptions") }
        _ = try makeNormaliser(name: "check")
        guard (1...(16 * 1024 * 1024)).contains(maxPayloadBytes) else {
            throw ConfigurationError("must be between 1 and 16777216", keyPath: "max_payload_bytes")
        }
        guard (1...10_000).contains(maxBatch) else { throw ConfigurationError("must be between 1 and 10000", keyPath: "max_batch") }
        guard (0...1000).contains(commitIntervalMilliseconds) else {
            throw ConfigurationError("must be between 0 and 1000", keyPath: "commit_interval_ms")
        }
        if let shareGroup, shareGroup.isEmpty || shareGroup.contains(where: { "/+#".contains($0) }) {
            throw ConfigurationError("a share group is a non-empty name without '/', '+' or '#'", keyPath: "share_group")
        }
    }

    /// Without a share group every subscriber receives every message, so instances sharing a store
    /// take turns (one subscribes, the others stand by); with one, the broker spreads the messages
    /// over all of them.
    public var runsOncePerDeployment: Bool { shareGroup == nil }

    /// Builds the source.
    public func makeSource(name: String) throws(ConfigurationError) -> any SourceAdapter {
        MQTTSource(name: name, options: try connection.mosquittoOptions(cleanSession: false),
                   normaliser: try makeNormaliser(name: name), maxBatch: maxBatch,
                   commitInterval: .milliseconds(commitIntervalMilliseconds), shareGroup: shareGroup)
    }

    /// A throwaway source on `url`: a clean session under a fresh client id and outside any share group,
    /// so the gateway's persistent session (and what the broker queues for it) is untouched and the
    /// preview sees every message rather than taking a share of them from the gateways.
    public func makePreviewSource(name: String, url: String) throws(ConfigurationError) -> any SourceAdapter {
        var preview = self
        preview.connection.url = url
        preview.connection.clientID = "herald-tail-\(UInt32.random(in: 0...UInt32.max))"
        try preview.validate()
        return MQTTSource(name: name, options: try preview.connection.mosquittoOptions(cleanSession: true),
                          normaliser: try preview.makeNormaliser(name: name), maxBatch: maxBatch,
                          commitInterval: .zero, shareGroup: nil)
    }

    /// Builds the replay normaliser.
    public func makeReplayNormaliser(name: String) throws(ConfigurationError) -> any ReplayNormaliser {
        try makeNormaliser(name: name)
    }

    func makeNormaliser(name: String) throws(ConfigurationError) -> MQTTTopicNormaliser {
        var routes: [MQTTTopicNormaliser.Route] = []
        for (index, subscription) in subscriptions.enumerated() {
            do throws(ConfigurationError) {
                let template = try subscription.template(prefix: topicPrefix)
                routes.append(.init(template: template, kind: subscription.event,
                                    decoder: EventPayloadDecoder(maxPayloadBytes: maxPayloadBytes, mapping: subscription.mapping,
                                                                 timeFormat: subscription.timeFormat)))
            } catch {
                throw error.nested(under: "subscriptions[\(index)]")
            }
        }
        return MQTTTopicNormaliser(adapter: name, routes: routes, maxPayloadBytes: maxPayloadBytes)
    }
}
