public import HeraldPluginAPI

/// The http family's descriptor, for the registry: a server that backends POST events to.
public enum HTTPIngestAdapters {
    /// `type: http` under `sources`.
    public static let source = SourceDescriptor(
        type: "http", summary: "Listens for backends that POST events (JSON, arrays, NDJSON); answers 202 only once they are committed",
        options: [
            AdapterOption("listen", .string, default: HTTPIngestConfiguration.defaultListen,
                          "host:port; anything but loopback requires tokens or a webhook secret"),
            AdapterOption("path", .string, default: "/v1/events", "Path events are POSTed to"),
            AdapterOption("tokens", .strings, "Accepted bearer tokens (use ${ENV_VAR}); several, so they can be rotated"),
            AdapterOption("token_file", .string, "File of accepted bearer tokens, one per line"),
            AdapterOption("webhook_secret", .string, "Standard Webhooks secret (whsec_<base64> or text) whose signatures are accepted"),
            AdapterOption("webhook_secret_file", .string, "File holding the webhook secret"),
            AdapterOption("signature_tolerance_s", .number, default: "300", "How far webhook-timestamp may be from now, seconds"),
            AdapterOption("tls", .object([
                AdapterOption("cert_file", .string, required: true, "Server certificate chain (PEM)"),
                AdapterOption("key_file", .string, required: true, "Server private key (PEM)"),
                AdapterOption("client_ca_file", .string, "CA that client certificates must chain to (mutual TLS)"),
                AdapterOption("min_version", .choice(["1.2", "1.3"]), default: "1.2", "Lowest TLS version accepted"),
            ]), "Serve HTTPS; without it the listener speaks plain HTTP"),
            AdapterOption("max_body_bytes", .integer, default: "1048576", "Largest request body; larger is 413"),
            AdapterOption("max_events_per_request", .integer, default: "1000", "Most events in one request; more is 413"),
            AdapterOption("max_in_flight", .integer, default: "64", "Requests handled at once; more are answered 429 with Retry-After"),
            AdapterOption("max_payload_bytes", .integer, default: "65536", "Largest single event; larger is dead-lettered (oversize)"),
            AdapterOption("max_batch", .integer, default: "5000", "Most records in one commit (concurrent requests share commits)"),
            AdapterOption("idle_timeout_s", .number, default: "30", "Seconds a body may take to arrive (408); an idle connection is closed five seconds later"),
            AdapterOption("kind", .choice(PayloadKind.allCases.map(\.rawValue)), default: "auto", "What the events are"),
            .timeFormat,
            .fieldMapping,
        ],
        decode: { try HTTPIngestConfiguration(from: $0) })
}
