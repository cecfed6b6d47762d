public import HeraldPluginAPI
import NetworkAdapterSupport

/// The rest family's descriptors, for the registry: the polling source and the webhook sink.
public enum RESTAdapters {
    /// `type: rest` under `sources`.
    public static let source = SourceDescriptor(
        type: "rest", summary: "Polls REST endpoints for new events: ETags, cursors stored with their events, Retry-After.",
        options: NetworkOptions.auth + [
            NetworkOptions.tls(serverName: false),
            AdapterOption("connect_timeout_s", .number, default: "5", "Seconds to connect"),
            AdapterOption("request_timeout_s", .number, default: "30", "Seconds for a whole request"),
            AdapterOption("max_page_bytes", .integer, default: "8388608", "Larger pages are refused; also the limit per item"),
            AdapterOption("max_pages_per_poll", .integer, default: "1000", "Pages followed in one poll before waiting"),
            AdapterOption("endpoints", .objects([
                AdapterOption("name", .string, required: true, "Unique name (checkpoints, logs)"),
                AdapterOption("url", .string, required: true, "http:// or https:// URL"),
                AdapterOption("interval_s", .number, default: "10", "Seconds between polls"),
                AdapterOption("jitter", .number, default: "0.1", "Spread of the interval as a fraction (0–1)"),
                AdapterOption("items", .string, default: "/items", "JSON pointer to the events array (\"\" = the page)"),
                AdapterOption("kind", .choice(PayloadKind.allCases.map(\.rawValue)), default: "auto", "What the items are"),
                .timeFormat,
                .fieldMapping,
                AdapterOption("cursor", .object([
                    AdapterOption("from", .choice(RESTCursor.Source.allCases.map(\.rawValue)), required: true,
                                  "field: a page field; link: the Link rel=next header"),
                    AdapterOption("pointer", .string, "JSON pointer to the next cursor (from: field)"),
                    AdapterOption("param", .string, default: "cursor", "Query parameter that carries it (from: field)"),
                ]), "How the next page is found"),
            ]), required: true, "The endpoints to poll"),
        ],
        decode: { try RESTSourceConfiguration(from: $0) })
}

extension RESTAdapters {
    /// `type: webhook` under `sinks`.
    public static let webhook = SinkDescriptor(
        type: "webhook", summary: "POSTs outputs as signed JSON (Standard Webhooks) to a URL per output kind.",
        options: NetworkOptions.auth + [
            AdapterOption("urls", .object(OutputKind.allCases.map { AdapterOption($0.rawValue, .string, "URL for \($0.rawValue) outputs") }),
                          required: true, "URL per output kind; kinds without one are not sent"),
            AdapterOption("secret", .string, "Signing secret (use ${ENV_VAR}); whsec_<base64> or text"),
            AdapterOption("secret_file", .string, "File holding the signing secret"),
            AdapterOption("max_attempts", .integer, default: "10", "Failed attempts before an output is dead-lettered"),
            AdapterOption("request_timeout_s", .number, default: "10", "Seconds for one request"),
            AdapterOption("concurrency", .integer, default: "8", "Recipients served at once; each recipient's outputs stay in order"),
            NetworkOptions.tls(serverName: false, pins: false),
        ],
        decode: { try WebhookSinkConfiguration(from: $0) })
}
