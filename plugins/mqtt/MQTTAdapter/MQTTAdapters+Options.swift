import HeraldPluginAPI

extension MQTTAdapters {
    /// Connection options shared by the source and the sink.
    static let connectionOptions: [AdapterOption] = [
        AdapterOption("url", .string, required: true, "mqtt://host[:1883] or mqtts://host[:8883]"),
        AdapterOption("client_id", .string, required: true, "Client id; keep it stable (the broker keeps the persistent session under it)"),
        AdapterOption("username", .string, "Broker user name"),
        AdapterOption("password", .string, "Password (use ${ENV_VAR}); never logged"),
        AdapterOption("password_file", .string, "File holding the password"),
        AdapterOption("keepalive", .integer, default: "30", "Keepalive in seconds (5–3600)"),
        AdapterOption("tls", .object([
            AdapterOption("ca_file", .string, "PEM file of trusted CAs (default: the system store)"),
            AdapterOption("ca_path", .string, "Directory of trusted CAs"),
            AdapterOption("cert_file", .string, "Client certificate (mutual TLS)"),
            AdapterOption("key_file", .string, "Client key"),
            AdapterOption("insecure_skip_verify", .boolean, default: "false", "Skip host name verification (development only)"),
        ]), "TLS settings for mqtts://; TLS 1.2 minimum, verification on"),
        AdapterOption("protocol", .choice(["3.1.1", "5"]), default: "3.1.1", "MQTT protocol version"),
        AdapterOption("session_expiry_s", .integer, default: "\(MQTTConnectionOptions.defaultSessionExpirySeconds)",
                      "MQTT 5: seconds the broker keeps the session and its queued messages after a disconnect"),
        AdapterOption("receive_maximum", .integer, default: "65535",
                      "MQTT 5: messages the broker may send before their acknowledgements (keep above max_batch)"),
    ]

    /// The source's options.
    static let sourceOptions: [AdapterOption] = connectionOptions + [
        AdapterOption("topic_prefix", .string, default: "\"\"", "Prepended to every subscription template"),
        AdapterOption("max_payload_bytes", .integer, default: "65536", "Larger payloads are dead-lettered before parsing"),
        AdapterOption("max_batch", .integer, default: "\(MQTTSourceConfiguration.defaultMaxBatch)", "Messages read before one group commit"),
        AdapterOption("commit_interval_ms", .integer, default: "\(MQTTSourceConfiguration.defaultCommitIntervalMilliseconds)",
                      "While messages keep coming, a commit starts at most this often (0: at once); a lone message never waits"),
        AdapterOption("share_group", .string,
                      "Subscribe as $share/GROUP/… so the broker spreads messages over every instance in the group"),
        AdapterOption("subscriptions", .objects([
            AdapterOption("topic", .string, required: true, "Template with {chat} and {user} levels"),
            AdapterOption("event", .choice(PayloadKind.allCases.map(\.rawValue)), required: true, "What the payloads are"),
            .timeFormat,
            .fieldMapping,
        ]), default: "Herald's layout", "What to subscribe to and how to read it"),
    ]

    /// The sink's options.
    static let sinkOptions: [AdapterOption] = connectionOptions + [
        AdapterOption("outputs", .strings, default: "all", "Output kinds to publish: notification, live_message, read_receipt, badge"),
        AdapterOption("topics", .object(OutputKind.allCases.map { AdapterOption($0.rawValue, .string, "Topic template with {user}") }),
                      "Topic template per output kind"),
        AdapterOption("topic_prefix", .string, default: "\"\"", "Prepended to every topic"),
        AdapterOption("retain_badges", .boolean, default: "true", "Publish badges retained"),
        AdapterOption("ack_timeout_s", .number, default: "10", "Seconds to wait for PUBACKs before retrying"),
        AdapterOption("max_inflight", .integer, default: "\(MQTTSinkConfiguration.defaultMaxInflight)",
                      "Publishes awaiting their PUBACK at once; raise it for a distant broker"),
        AdapterOption("message_expiry_s", .object(OutputKind.allCases.map { AdapterOption($0.rawValue, .integer, "Seconds") }),
                      "MQTT 5: the broker drops an output of this kind still undelivered after this long"),
        AdapterOption("content_type", .string, default: "application/json", "MQTT 5: content type sent with every output"),
    ]
}
