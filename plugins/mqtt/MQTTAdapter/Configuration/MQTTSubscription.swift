public import HeraldPluginAPI

/// One subscription of the MQTT source: a topic template, the event its payloads describe, and how
/// to read them.
public struct MQTTSubscription: Decodable, Sendable {
    /// Topic template, e.g. `users/{user}/read`. `{chat}` and `{user}` bind the chat and the acting user.
    public var topic: String
    /// The event kind, or `auto` to read it from the payload's `type`.
    public var event: PayloadKind
    /// JSON pointers for payloads not in Herald's own shape.
    public var mapping: FieldMapping
    /// How times are read.
    public var timeFormat: TimeFormat

    enum CodingKeys: String, CodingKey { case topic, event, mapping, timeFormat = "time_format" }

    /// Creates a subscription.
    public init(topic: String, event: PayloadKind, mapping: FieldMapping = FieldMapping(), timeFormat: TimeFormat = .auto) {
        self.topic = topic
        self.event = event
        self.mapping = mapping
        self.timeFormat = timeFormat
    }

    /// Decodes one `subscriptions` entry.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        topic = try container.decode(String.self, forKey: .topic)
        event = try container.decode(PayloadKind.self, forKey: .event)
        mapping = try container.decodeIfPresent(FieldMapping.self, forKey: .mapping) ?? FieldMapping()
        timeFormat = try container.decodeIfPresent(TimeFormat.self, forKey: .timeFormat) ?? .auto
    }

    /// Herald's default topic layout.
    public static let defaults: [MQTTSubscription] = [
        MQTTSubscription(topic: "chats/{chat}/messages", event: .messageReceived),
        MQTTSubscription(topic: "chats/{chat}/created", event: .chatCreated),
        MQTTSubscription(topic: "users/{user}/read", event: .messagesRead),
        MQTTSubscription(topic: "users/{user}/presence", event: .chatPresence),
    ]

    /// Parses and checks the template against the event kind.
    func template(prefix: String) throws(ConfigurationError) -> TopicTemplate {
        let template = try TopicTemplate(prefix + topic).checkedCaptures()
        if event.isClientEvent, !template.captureNames.contains("user") {
            throw ConfigurationError(
                "\(event.rawValue) is a client event: its topic must capture the acting user as {user} (the broker's ACL protects it)",
                keyPath: "topic")
        }
        try mapping.validatePointers(keyPath: "mapping")
        return template
    }
}

extension TopicTemplate {
    /// Only `{chat}` and `{user}` mean something to the source.
    func checkedCaptures() throws(ConfigurationError) -> TopicTemplate {
        for name in captureNames where name != "chat" && name != "user" {
            throw ConfigurationError("unknown placeholder {\(name)} in \"\(description)\"; use {chat} or {user}", keyPath: "topic")
        }
        return self
    }
}
