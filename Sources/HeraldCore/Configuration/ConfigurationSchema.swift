import Foundation
public import HeraldPluginAPI

/// The JSON Schema (draft 2020-12) of a whole Herald config, built from the core sections and each
/// registered adapter's options. Editors use it for completion and checks; unknown keys are errors,
/// as in `herald check`. Strings are allowed wherever `${VAR}` interpolation could stand for a value.
public enum ConfigurationSchema {
    /// The core sections' options.
    public static let sections: [String: [AdapterOption]] = [
        "store": [
            AdapterOption("path", .string, default: "var/herald.sqlite", "SQLite file (WAL mode); its folder is created. An error together with url"),
            AdapterOption("durability", .choice(["full", "normal"]), default: "full", "full: every commit is durable before it is acknowledged (SQLite syncs its log; PostgreSQL keeps the server's `synchronous_commit`, on by default). normal survives a killed Herald but may lose the last commits on power loss: SQLite syncs at checkpoints only, and PostgreSQL sessions set `synchronous_commit = off`, so a server crash may lose its last 0.6 s or so"),
            AdapterOption("cache_mib", .integer, default: "\(SQLiteChatStore.defaultCacheMiB)", "SQLite only (an error with url): the writer's page cache, MiB (1–4096); raise it for stores with many active chats: each MiB is the process's own memory, and a commit whose chats' index pages do not fit reads them again"),
            AdapterOption("url", .string, "postgres://USER@HOST:PORT/DATABASE[?sslmode=…&sslrootcert=…&sslcert=…&sslkey=…&application_name=…&connect_timeout=SECONDS] selects PostgreSQL instead of path; never a password here. HOST1:PORT1,HOST2:PORT2 lists a primary and its standbys: Herald writes to whichever accepts writes. TLS is verify-full unless every host is loopback"),
            AdapterOption("password_file", .string, "File whose first line is the PostgreSQL password; read again for each new connection, so a rotated password needs no restart"),
            AdapterOption("schema", .string, "PostgreSQL: the schema of Herald's tables (a lower-case identifier; created by the first migration if missing); default: the server's search_path, usually public"),
            AdapterOption("password_env", .string, default: PostgresStoreSettings.defaultPasswordEnvironment,
                          "Environment variable holding the PostgreSQL password when no password_file is set"),
            AdapterOption("statement_timeout_s", .number, default: "\(Int(PostgresStoreSettings.defaultStatementTimeoutSeconds))",
                          "PostgreSQL: seconds a statement may run, or a transaction sit idle, before it fails and its batch is retried (1–3600); a server that stops answering is given up on after this long"),
        ],
        "router": [
            AdapterOption("presence_ttl_s", .number, default: "300", "How long chat.opened lasts without renewal"),
            AdapterOption("preview_length", .integer, default: "120", "Notification preview, characters (10–10000)"),
        ],
        "outbox": [
            AdapterOption("batch_size", .integer, default: "1000", "Outputs handed to a sink at once (1–10000)"),
            AdapterOption("drain_timeout_s", .number, default: "5", "Seconds to keep delivering after SIGTERM"),
        ],
        "log": [
            AdapterOption("level", .choice(["trace", "debug", "info", "notice", "warning", "error", "critical"]), default: "info", "Log level"),
            AdapterOption("format", .choice(LogSection.Format.allCases.map(\.rawValue)), default: "text",
                          "text: one line per event as swift-log writes it; json: one JSON object per line (time with milliseconds, level, msg, module, then the metadata), for log shippers"),
        ],
        "admin": [
            AdapterOption("enabled", .boolean, default: "true", "Serve the admin API"),
            AdapterOption("listen", .string, default: "127.0.0.1:9464", "host:port; anything but loopback requires a token"),
            AdapterOption("token", .string, "Bearer token every endpoint but /healthz requires (use ${ENV_VAR})"),
            AdapterOption("token_file", .string, "File holding the token (its first line); exclusive with token"),
            AdapterOption("reconnect_budget_s", .number, default: "10", "/readyz tolerates a source reconnecting this long"),
        ],
        "instance": [
            AdapterOption("id", .string, default: "the host name", "Unique per instance sharing a store; leases are held under it"),
            AdapterOption("lease_ttl_s", .number, default: "10",
                          "Seconds a lease (a sink's delivery, a singleton source) outlives its holder's last renewal (1–3600)"),
        ],
    ]

    /// `store:` keys that only a SQLite store takes: an error beside `url`.
    static let sqliteOnlyStoreKeys = ["path", "cache_mib"]
    /// `store:` keys that only a PostgreSQL store takes: an error without `url`.
    static let postgresOnlyStoreKeys = ["password_file", "schema"]

    /// The schema as a JSON object.
    public static func make(registry: AdapterRegistry) -> [String: Any] {
        var properties: [String: Any] = [:]
        for (name, options) in sections { properties[name] = object(options, summary: "`\(name):` section") }
        if var store = properties["store"] as? [String: Any] {
            // One store: SQLite's keys and `url` exclude each other, and PostgreSQL's need `url` (as `herald check` says).
            store["not"] = ["anyOf": sqliteOnlyStoreKeys.map { ["required": ["url", $0]] }]
            store["dependentRequired"] = Dictionary(uniqueKeysWithValues: postgresOnlyStoreKeys.map { ($0, ["url"]) })
            properties["store"] = store
        }
        properties["sources"] = ["type": "array", "description": "How events come in",
                                 "items": ["oneOf": registry.sources.values.sorted { $0.type < $1.type }.map { adapter($0) }]]
        properties["sinks"] = ["type": "array", "description": "How outputs leave",
                               "items": ["oneOf": registry.sinks.values.sorted { $0.type < $1.type }.map { adapter($0) }]]
        return ["$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Herald configuration", "type": "object",
                "additionalProperties": false, "properties": properties]
    }

    /// The schema as pretty-printed JSON text.
    public static func text(registry: AdapterRegistry) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: make(registry: registry), options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]))
            ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    private static func adapter<Configuration>(_ descriptor: AdapterDescriptor<Configuration>) -> [String: Any] {
        let options = [AdapterOption("name", .string, required: true, "Unique instance name"),
                       AdapterOption("type", .choice([descriptor.type]), required: true, "Adapter type")] + descriptor.options
        return object(options, summary: descriptor.summary)
    }

    private static func object(_ options: [AdapterOption], summary: String) -> [String: Any] {
        var properties: [String: Any] = [:]
        for option in options { properties[option.key] = schema(option) }
        var result: [String: Any] = ["type": "object", "description": summary, "additionalProperties": false, "properties": properties]
        let required = options.filter(\.required).map(\.key)
        if !required.isEmpty { result["required"] = required }
        return result
    }

    private static func schema(_ option: AdapterOption) -> [String: Any] {
        var result: [String: Any]
        switch option.kind {
        case .string: result = ["type": "string"]
        case .integer: result = ["type": ["integer", "string"]]
        case .number: result = ["type": ["number", "string"]]
        case .boolean: result = ["type": ["boolean", "string"]]
        case .choice(let values): result = ["type": "string", "enum": values]
        case .strings: result = ["type": "array", "items": ["type": "string"]]
        case .stringMap: result = ["type": "object", "additionalProperties": ["type": "string"]]
        case .object(let children): result = object(children, summary: option.summary)
        case .objects(let children): result = ["type": "array", "items": object(children, summary: option.summary)]
        }
        result["description"] = option.summary + (option.defaultValue.map { " (default: \($0))" } ?? "")
        return result
    }
}
