/// A decoded source section of the config. Decoding is strict: unknown keys are errors.
///
/// Requirements: `validate()` checks everything that can be checked offline (values, ranges,
/// combinations, files that must exist) and never touches the network; `herald check` relies on it.
public protocol SourceConfiguration: Sendable {
    /// Checks the section offline.
    func validate() throws(ConfigurationError)
    /// Builds the running adapter. May read secret files; must not connect.
    func makeSource(name: String) throws(ConfigurationError) -> any SourceAdapter
    /// Builds the pure normaliser used to replay dead-lettered inputs of this adapter.
    func makeReplayNormaliser(name: String) throws(ConfigurationError) -> any ReplayNormaliser
    /// Builds a throwaway instance connected to `url` for `herald tail --source URL`. It must not touch
    /// the gateway's durable state upstream (e.g. a clean MQTT session under a new client id, so the real
    /// persistent session keeps its messages). The default says the adapter cannot do this.
    func makePreviewSource(name: String, url: String) throws(ConfigurationError) -> any SourceAdapter
    /// Whether only one instance of a deployment may run the source at a time: a poller that keeps a
    /// cursor, or a stream that must be consumed once. Instances sharing a store then run it in turn,
    /// under a lease; a source every instance runs side by side (an MQTT shared subscription, an HTTP
    /// listener) says `false`, the default.
    var runsOncePerDeployment: Bool { get }
}

extension SourceConfiguration {
    /// Every instance runs the source unless the adapter says otherwise.
    public var runsOncePerDeployment: Bool { false }

    /// Not supported unless the adapter implements it.
    public func makePreviewSource(name: String, url: String) throws(ConfigurationError) -> any SourceAdapter {
        throw ConfigurationError("this adapter cannot run on its own with `herald tail --source`")
    }
}

/// A decoded sink section of the config.
public protocol SinkConfiguration: Sendable {
    /// Checks the section offline.
    func validate() throws(ConfigurationError)
    /// Builds the running sink. May read secret files; must not connect.
    func makeSink(name: String) throws(ConfigurationError) -> any SinkAdapter
}

/// Re-normalises a dead-lettered input (after a config fix) exactly as the live adapter would.
public protocol ReplayNormaliser: Sendable {
    /// Normalises the raw input that arrived with `provenance`.
    func normalise(_ raw: [UInt8], provenance: Provenance) -> SourceRecord
}

/// Describes an adapter type: its config name, a summary, and how to decode its section.
public struct AdapterDescriptor<Configuration>: Sendable {
    /// The `type:` value in the config, a lowercase protocol noun (`mqtt`).
    public let type: String
    /// One sentence for `--help` and docs.
    public let summary: String
    /// The adapter's own options (besides `name` and `type`).
    public let options: [AdapterOption]
    /// Decodes the adapter's section (the whole list element, including `name` and `type`).
    public let decode: @Sendable (any Decoder) throws -> Configuration

    /// Creates a descriptor.
    public init(type: String, summary: String, options: [AdapterOption] = [],
                decode: @escaping @Sendable (any Decoder) throws -> Configuration) {
        self.type = type
        self.summary = summary
        self.options = options
        self.decode = decode
    }
}

/// Describes a source adapter type.
public typealias SourceDescriptor = AdapterDescriptor<any SourceConfiguration>
/// Describes a sink adapter type.
public typealias SinkDescriptor = AdapterDescriptor<any SinkConfiguration>

/// The adapter types a gateway knows: a value, built from one explicit list, injectable in tests.
public struct AdapterRegistry: Sendable {
    /// Source types by name.
    public private(set) var sources: [String: SourceDescriptor] = [:]
    /// Sink types by name.
    public private(set) var sinks: [String: SinkDescriptor] = [:]

    /// An empty registry.
    public init() {}

    /// Returns a registry with `descriptor` added (a later one of the same type replaces it).
    public func with(source descriptor: SourceDescriptor) -> AdapterRegistry {
        var copy = self
        copy.sources[descriptor.type] = descriptor
        return copy
    }

    /// Returns a registry with `descriptor` added.
    public func with(sink descriptor: SinkDescriptor) -> AdapterRegistry {
        var copy = self
        copy.sinks[descriptor.type] = descriptor
        return copy
    }
}
