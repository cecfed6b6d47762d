public import HeraldPluginAPI
import NetworkAdapterSupport

/// The websocket family's descriptor, for the registry.
public enum WebSocketAdapters {
    /// `type: websocket` under `sources`.
    public static let source = SourceDescriptor(
        type: "websocket", summary: "Connects to a wss:// event stream; resumes from the last committed event id.",
        options: NetworkOptions.auth + [
            AdapterOption("url", .string, required: true, "wss://host/path (ws:// for development)"),
            AdapterOption("subprotocols", .strings, "Subprotocols offered in the handshake"),
            AdapterOption("subscribe", .string, "Text message sent after every connect"),
            NetworkOptions.tls,
            AdapterOption("ping_interval_s", .number, default: "20", "Seconds between WebSocket pings (0 = off)"),
            AdapterOption("pong_timeout_s", .number, default: "ping_interval_s", "Seconds a pong may take (at most the interval)"),
            AdapterOption("app_ping", .object([
                AdapterOption("message", .string, required: true, "Text sent as the ping"),
                AdapterOption("interval_s", .number, default: "15", "Seconds between pings"),
                AdapterOption("timeout_s", .number, default: "10", "Seconds to wait for any message after a ping"),
                AdapterOption("pong", .object([
                    AdapterOption("pointer", .string, required: true, "JSON pointer in a reply"),
                    AdapterOption("value", .string, required: true, "Value that marks a reply"),
                ]), default: "/type = pong", "How replies are recognised (they are not events)"),
            ]), "Application-level ping messages"),
            AdapterOption("max_message_bytes", .integer, default: "65536", "Larger messages are dead-lettered; the connection closes with 1009"),
            AdapterOption("max_batch", .integer, default: "500", "Messages committed in one transaction at most"),
            AdapterOption("stable_after_s", .number, default: "30", "Seconds up before the reconnect backoff resets"),
            AdapterOption("resume", .object([
                AdapterOption("id_pointer", .string, required: true, "JSON pointer to each message's event id"),
                AdapterOption("query_param", .string, "Query parameter that carries the last committed id"),
                AdapterOption("header", .string, "Header that carries it instead (e.g. Last-Event-ID)"),
            ]), "Resume after the last committed event on reconnect"),
            AdapterOption("kind", .choice(PayloadKind.allCases.map(\.rawValue)), default: "auto", "What the messages are"),
            .timeFormat,
            .fieldMapping,
        ],
        decode: { try WebSocketSourceConfiguration(from: $0) })
}
