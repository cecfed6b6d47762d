import Foundation
public import HeraldPluginAPI
public import Logging

/// The whole `herald.yaml`, decoded strictly (unknown keys are errors).
public struct HeraldConfiguration: Decodable, Sendable {
    /// `store:` — where the chat store lives.
    public var store: StoreSection
    /// `router:` — presence TTL and preview length.
    public var router: RouterSection
    /// `outbox:` — delivery batching and the shutdown drain.
    public var outbox: OutboxSection
    /// `log:` — level.
    public var log: LogSection
    /// `admin:` — the admin API.
    public var admin: AdminSection
    /// `sources:` — how events come in.
    public var sources: [SourceSection]
    /// `sinks:` — how outputs leave.
    public var sinks: [SinkSection]
    /// `instance:` — who this instance is among those sharing a store.
    public var instance: InstanceSection

    enum CodingKeys: String, CodingKey { case store, router, outbox, log, admin, sources, sinks, instance }

    /// Decodes the file; absent sections take their defaults.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        store = try container.decodeIfPresent(StoreSection.self, forKey: .store) ?? StoreSection()
        router = try container.decodeIfPresent(RouterSection.self, forKey: .router) ?? RouterSection()
        outbox = try container.decodeIfPresent(OutboxSection.self, forKey: .outbox) ?? OutboxSection()
        log = try container.decodeIfPresent(LogSection.self, forKey: .log) ?? LogSection()
        admin = try container.decodeIfPresent(AdminSection.self, forKey: .admin) ?? AdminSection()
        sources = try container.decodeIfPresent([SourceSection].self, forKey: .sources) ?? []
        sinks = try container.decodeIfPresent([SinkSection].self, forKey: .sinks) ?? []
        instance = try container.decodeIfPresent(InstanceSection.self, forKey: .instance) ?? InstanceSection()
    }
}

/// `instance:` — for several instances on one PostgreSQL store: the id their leases are held under
/// and how long a lease outlives its holder's last renewal.
public struct InstanceSection: Decodable, Sendable {
    /// Unique per running instance (default: the host name).
    public var id: String = InstanceIdentity.defaultID
    /// Seconds a lease (a sink's delivery, a singleton source) lasts unless renewed; a dead instance's
    /// work passes to another within this time.
    public var leaseTTLSeconds: Double = 10

    init() {}

    /// Decodes the section.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        id = try container.decodeIfPresent(String.self, forKey: AnyCodingKey(stringValue: "id")) ?? id
        leaseTTLSeconds = try container.decodeIfPresent(Double.self, forKey: AnyCodingKey(stringValue: "lease_ttl_s")) ?? leaseTTLSeconds
    }

    /// This instance's identity.
    public var identity: InstanceIdentity { InstanceIdentity(id: id) }

    /// The lease TTL.
    public var leaseTTL: Duration { .milliseconds(Int64(leaseTTLSeconds * 1000)) }

    func validate() throws(ConfigurationError) {
        guard !id.isEmpty, id.utf8.count <= 200 else { throw ConfigurationError("must be 1–200 characters", keyPath: "id") }
        guard (1...3600).contains(leaseTTLSeconds) else {
            throw ConfigurationError("must be between 1 and 3600 seconds", keyPath: "lease_ttl_s")
        }
    }
}

/// `store:` — a SQLite file (`path`, the default) or a PostgreSQL database (`url`).
public struct StoreSection: Decodable, Sendable {
    /// SQLite file path (directories are created).
    public var path: String = "var/herald.sqlite"
    /// `full` (every commit durable before it is acknowledged) or `normal` (survives a killed Herald, not a
    /// power loss): SQLite's `synchronous`, or PostgreSQL's `synchronous_commit` turned off for `normal`.
    public var durability: SQLiteChatStore.Durability = .full
    /// The writer's page cache in MiB (SQLite `cache_size`); readers keep 2 MiB each. SQLite only.
    public var cacheMiB = SQLiteChatStore.defaultCacheMiB
    /// The SQLite-only keys the file sets (`path`, `cache_mib`): with `url` they would be ignored, so they are errors.
    private var sqliteKeysSet: [String] = []
    /// The PostgreSQL-only keys the file sets (`password_file`, `schema`): without `url` they are errors.
    private var postgresKeysSet: [String] = []
    /// `postgres://USER@HOST:PORT/DATABASE[?sslmode=…&sslrootcert=…&sslcert=…&sslkey=…]`: selects PostgreSQL instead of `path`.
    public var url: String?
    /// A file holding the PostgreSQL password (its first line).
    public var passwordFile: String?
    /// The environment variable holding the PostgreSQL password when no `password_file` is set.
    public var passwordEnvironment = PostgresStoreSettings.defaultPasswordEnvironment
    /// The PostgreSQL schema of Herald's tables, or `nil` for the server's `search_path`.
    public var schema: String?
    /// Seconds a PostgreSQL statement may take, or a transaction may sit idle, before it fails.
    public var statementTimeoutSeconds = PostgresStoreSettings.defaultStatementTimeoutSeconds

    /// The defaults: a SQLite store at `var/herald.sqlite`.
    public init() {}

    /// Decodes the section.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        sqliteKeysSet = ConfigurationSchema.sqliteOnlyStoreKeys.filter { container.contains(AnyCodingKey(stringValue: $0)) }
        postgresKeysSet = ConfigurationSchema.postgresOnlyStoreKeys.filter { container.contains(AnyCodingKey(stringValue: $0)) }
        path = try container.decodeIfPresent(String.self, forKey: AnyCodingKey(stringValue: "path")) ?? path
        durability = try container.decodeIfPresent(SQLiteChatStore.Durability.self, forKey: AnyCodingKey(stringValue: "durability"))
            ?? durability
        cacheMiB = try container.decodeIfPresent(Int.self, forKey: AnyCodingKey(stringValue: "cache_mib")) ?? cacheMiB
        url = try container.decodeIfPresent(String.self, forKey: AnyCodingKey(stringValue: "url"))
        passwordFile = try container.decodeIfPresent(String.self, forKey: AnyCodingKey(stringValue: "password_file"))
        passwordEnvironment = try container.decodeIfPresent(String.self, forKey: AnyCodingKey(stringValue: "password_env")) ?? passwordEnvironment
        schema = try container.decodeIfPresent(String.self, forKey: AnyCodingKey(stringValue: "schema"))
        statementTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: AnyCodingKey(stringValue: "statement_timeout_s"))
            ?? statementTimeoutSeconds
    }

    /// Opens (creating if needed) the SQLite store at `path`, migrating it if it is older than this
    /// Herald; `logger` says so before a migration starts.
    public func openSQLiteStore(at path: String? = nil, logger: Logger? = nil) throws -> SQLiteChatStore {
        let path = path ?? self.path
        return try SQLiteChatStore(path: path, durability: durability, cacheMiB: cacheMiB) { pending in
            logger?.notice("Migrating the store; on a large store this takes a while (rewriting the messages table: about 10 s per million messages).",
                           metadata: ["path": "\(path)", "migrations": "\(pending.joined(separator: ", "))"])
        }
    }

    /// The PostgreSQL settings when `url` is set, with the password from `password_file` or the
    /// environment; `nil` for SQLite.
    public func postgresSettings(environment: [String: String]) throws(ConfigurationError) -> PostgresStoreSettings? {
        guard let url else { return nil }
        var password: Secret?
        if let passwordFile {
            guard let secret = PostgresStoreSettings.readPasswordFile(passwordFile) else {
                throw ConfigurationError("cannot read \(passwordFile)", keyPath: "password_file")
            }
            password = secret
        } else if let value = environment[passwordEnvironment] {
            password = Secret(value)
        }
        var settings: PostgresStoreSettings
        do {
            settings = try PostgresStoreSettings(url: url, password: password)
        } catch {
            throw ConfigurationError(error.detail, keyPath: "url")
        }
        settings.statementTimeout = .milliseconds(Int64(statementTimeoutSeconds * 1000))
        settings.asynchronousCommit = durability == .normal
        settings.passwordFile = passwordFile
        if let schema {
            do {
                try PostgresStoreSettings.validateSchema(schema)
            } catch {
                throw ConfigurationError(error.description, keyPath: "schema")
            }
            settings.schema = schema
        }
        return settings
    }

    /// One line for `herald check`: where the store is, without secrets.
    public var summary: String {
        if let settings = try? postgresSettings(environment: [:]) {
            return "PostgreSQL \(settings)" + (settings.asynchronousCommit ? " (durability normal: synchronous_commit off)" : "")
        }
        return "SQLite \(path) (durability \(durability.rawValue), cache \(cacheMiB) MiB)"
    }

    /// Checks the values decoding cannot.
    func validate() throws(ConfigurationError) {
        guard (1...4096).contains(cacheMiB) else { throw ConfigurationError("must be 1…4096", keyPath: "cache_mib") }
        guard (1...3600).contains(statementTimeoutSeconds) else {
            throw ConfigurationError("must be 1…3600 seconds", keyPath: "statement_timeout_s")
        }
        if url != nil {
            if let key = sqliteKeysSet.first {
                throw ConfigurationError("applies to SQLite only, and store.url selects PostgreSQL: remove one of them", keyPath: key)
            }
            // Offline: the URL's form and readable password and TLS files; the server is reached by `herald run`.
            if let settings = try postgresSettings(environment: [:]) {
                for (parameter, file) in [("sslrootcert", settings.rootCertificatePath), ("sslcert", settings.clientCertificatePath),
                                          ("sslkey", settings.clientKeyPath)] {
                    guard let file, !FileManager.default.isReadableFile(atPath: file) else { continue }
                    throw ConfigurationError("\(parameter): cannot read \(file) (does it exist, and may Herald's user read it?)", keyPath: "url")
                }
            }
        } else if let key = postgresKeysSet.first {
            throw ConfigurationError("applies to PostgreSQL only: set store.url too, or remove it", keyPath: key)
        } else {
            try validateFolder()
        }
    }

    /// The SQLite file's folder must exist or be creatable: its nearest existing ancestor is a folder
    /// Herald may write into.
    private func validateFolder() throws(ConfigurationError) {
        var folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        var isFolder: ObjCBool = false
        while !FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), folder.path != "/" {
            folder.deleteLastPathComponent()
        }
        guard isFolder.boolValue else {
            throw ConfigurationError("\(folder.path) is a file, so the store's folder cannot be created there; choose another path",
                                     keyPath: "path")
        }
        let missing = folder.path != URL(fileURLWithPath: path).deletingLastPathComponent().path
        guard FileManager.default.isWritableFile(atPath: folder.path) || !missing && FileManager.default.isWritableFile(atPath: path) else {
            throw ConfigurationError("\(folder.path) is not writable for this user; choose another path or fix its permissions",
                                     keyPath: "path")
        }
    }
}

/// `router:`
public struct RouterSection: Decodable, Sendable {
    /// Seconds a `chat.opened` lasts without renewal.
    public var presenceTTLSeconds: Double = 300
    /// Longest notification preview in characters.
    public var previewLength: Int = 120

    init() {}

    /// Decodes the section.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        presenceTTLSeconds = try container.decodeIfPresent(Double.self, forKey: AnyCodingKey(stringValue: "presence_ttl_s")) ?? presenceTTLSeconds
        previewLength = try container.decodeIfPresent(Int.self, forKey: AnyCodingKey(stringValue: "preview_length")) ?? previewLength
    }

    /// The router policy.
    public var policy: RouterPolicy {
        RouterPolicy(presenceTTLMilliseconds: Int64(presenceTTLSeconds * 1000), previewLength: previewLength)
    }
}

/// `outbox:`
public struct OutboxSection: Decodable, Sendable {
    /// Outputs handed to a sink at once.
    public var batchSize: Int = 1000
    /// Seconds to keep delivering after SIGTERM before leaving the rest for the next start.
    public var drainTimeoutSeconds: Double = 5

    init() {}

    /// Decodes the section.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        batchSize = try container.decodeIfPresent(Int.self, forKey: AnyCodingKey(stringValue: "batch_size")) ?? batchSize
        drainTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: AnyCodingKey(stringValue: "drain_timeout_s")) ?? drainTimeoutSeconds
    }
}

/// `admin:` — health, readiness, metrics, the live tail and store queries over HTTP.
public struct AdminSection: Decodable, Sendable {
    /// Serve the admin API.
    public var enabled = true
    /// `host:port` to bind. Anything but loopback requires a token.
    public var listen = "127.0.0.1:9464"
    /// Bearer token (use `${ENV_VAR}`). With a token set, every endpoint but `/healthz` requires it.
    public var token: Secret?
    /// File holding the token.
    public var tokenFile: String?
    /// Seconds a source may be disconnected (reconnecting) before `/readyz` reports it.
    public var reconnectBudgetSeconds: Double = 10

    init() {}

    /// Decodes the section.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        enabled = try container.decodeIfPresent(Bool.self, forKey: AnyCodingKey(stringValue: "enabled")) ?? enabled
        listen = try container.decodeIfPresent(String.self, forKey: AnyCodingKey(stringValue: "listen")) ?? listen
        token = try container.decodeIfPresent(Secret.self, forKey: AnyCodingKey(stringValue: "token"))
        tokenFile = try container.decodeIfPresent(String.self, forKey: AnyCodingKey(stringValue: "token_file"))
        reconnectBudgetSeconds = try container.decodeIfPresent(Double.self, forKey: AnyCodingKey(stringValue: "reconnect_budget_s"))
            ?? reconnectBudgetSeconds
    }

    /// The host and port of `listen`.
    public var hostAndPort: (host: String, port: Int)? { ListenAddress(listen).map { ($0.host, $0.port) } }

    /// Whether the admin API listens on loopback only.
    public var isLoopback: Bool { ListenAddress(listen)?.isLoopback ?? false }

    /// The token from `token` or `token_file` (trailing newline ignored), if any.
    public func resolvedToken() throws(ConfigurationError) -> String? {
        if let token, !token.value.isEmpty { return token.value }
        guard let tokenFile else { return nil }
        guard let text = try? String(contentsOfFile: tokenFile, encoding: .utf8) else {
            throw ConfigurationError("cannot read \(tokenFile)", keyPath: "token_file")
        }
        return text.trimmingCharacters(in: .newlines)
    }

    func validate() throws(ConfigurationError) {
        guard hostAndPort != nil else { throw ConfigurationError("\"\(listen)\" is not host:port", keyPath: "listen") }
        if token != nil, tokenFile != nil { throw ConfigurationError("set token or token_file, not both", keyPath: "token_file") }
        if enabled, !isLoopback, try resolvedToken() == nil {
            throw ConfigurationError("binding \(listen) (not loopback) requires a token (token or token_file)", keyPath: "listen")
        }
        guard reconnectBudgetSeconds >= 0 else { throw ConfigurationError("must be ≥ 0", keyPath: "reconnect_budget_s") }
    }
}

/// One entry of `sources:` — `name`, `type`, then the adapter's own keys.
public struct SourceSection: Decodable, Sendable {
    /// Unique instance name.
    public var name: String
    /// Adapter type.
    public var type: String
    /// The adapter's decoded settings.
    public var settings: any SourceConfiguration

    /// Decodes the entry through the registry's descriptor for `type`.
    public init(from decoder: any Decoder) throws {
        (name, type, settings) = try decodeAdapterSection(decoder, descriptors: \.sources)
    }
}

/// One entry of `sinks:`.
public struct SinkSection: Decodable, Sendable {
    /// Unique instance name.
    public var name: String
    /// Adapter type.
    public var type: String
    /// The adapter's decoded settings.
    public var settings: any SinkConfiguration

    /// Decodes the entry through the registry's descriptor for `type`.
    public init(from decoder: any Decoder) throws {
        (name, type, settings) = try decodeAdapterSection(decoder, descriptors: \.sinks)
    }
}

/// Reads `name` and `type`, finds the descriptor for `type` in the registry the loader put in
/// `userInfo`, and lets it decode the rest of the section.
private func decodeAdapterSection<Configuration>(
    _ decoder: any Decoder, descriptors: KeyPath<AdapterRegistry, [String: AdapterDescriptor<Configuration>]>
) throws -> (String, String, Configuration) {
    let container = try decoder.container(keyedBy: AnyCodingKey.self)
    let name = try container.decode(String.self, forKey: AnyCodingKey(stringValue: "name"))
    let type = try container.decode(String.self, forKey: AnyCodingKey(stringValue: "type"))
    let registry = decoder.userInfo[.adapterRegistry] as? AdapterRegistry ?? AdapterRegistry()
    guard let descriptor = registry[keyPath: descriptors][type] else {
        throw UnknownAdapterType(type: type, known: registry[keyPath: descriptors].keys.sorted(), path: decoder.codingPath)
    }
    return (name, type, try descriptor.decode(decoder))
}

/// A `type:` no registered adapter has.
struct UnknownAdapterType: Error {
    var type: String
    var known: [String]
    var path: [any CodingKey]
}

extension CodingUserInfoKey {
    /// Where the decoder finds the adapter registry.
    static let adapterRegistry: CodingUserInfoKey = {
        guard let key = CodingUserInfoKey(rawValue: "herald.adapterRegistry") else {
            preconditionFailure("CodingUserInfoKey(rawValue:) accepts every string")
        }
        return key
    }()
}

