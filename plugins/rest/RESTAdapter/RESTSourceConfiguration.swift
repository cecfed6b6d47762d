import Foundation
public import HeraldPluginAPI
import NetworkAdapterSupport

/// The `type: rest` source section: endpoints polled for "what's new", with ETags, cursors committed
/// with their events, `Retry-After`, jittered backoff, TLS and auth headers.
public struct RESTSourceConfiguration: SourceConfiguration, Decodable {
    /// The endpoints to poll.
    public var endpoints: [RESTEndpoint]
    /// Headers and token sent with every request.
    public var auth: HTTPAuthOptions
    /// TLS settings for `https://` endpoints.
    public var tls: TLSClientOptions
    /// Seconds to establish a connection.
    public var connectTimeoutSeconds: Double
    /// Seconds for a whole request, body included.
    public var requestTimeoutSeconds: Double
    /// Larger pages are dead-lettered unread; also the limit for one item.
    public var maxPageBytes: Int
    /// Pages followed in one poll before pausing for the interval (a runaway cursor guard).
    public var maxPagesPerPoll: Int

    enum CodingKeys: String, CodingKey {
        case endpoints, tls, connectTimeoutSeconds = "connect_timeout_s", requestTimeoutSeconds = "request_timeout_s"
        case maxPageBytes = "max_page_bytes", maxPagesPerPoll = "max_pages_per_poll"
    }

    /// Decodes the section.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        endpoints = try container.decode([RESTEndpoint].self, forKey: .endpoints)
        auth = try HTTPAuthOptions(from: decoder)
        tls = try container.decodeIfPresent(TLSClientOptions.self, forKey: .tls) ?? TLSClientOptions()
        connectTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .connectTimeoutSeconds) ?? 5
        requestTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .requestTimeoutSeconds) ?? 30
        maxPageBytes = try container.decodeIfPresent(Int.self, forKey: .maxPageBytes) ?? 8 << 20
        maxPagesPerPoll = try container.decodeIfPresent(Int.self, forKey: .maxPagesPerPoll) ?? 1000
    }

    /// Offline checks.
    public func validate() throws(ConfigurationError) {
        guard !endpoints.isEmpty else { throw ConfigurationError("list at least one endpoint", keyPath: "endpoints") }
        var names = Set<String>()
        for (index, endpoint) in endpoints.enumerated() {
            try endpoint.validate(keyPath: "endpoints[\(index)]")
            guard names.insert(endpoint.name).inserted else {
                throw ConfigurationError("\"\(endpoint.name)\" is used twice", keyPath: "endpoints[\(index)].name")
            }
        }
        try auth.validate()
        try tls.validate(serverName: false)
        guard connectTimeoutSeconds > 0 else { throw ConfigurationError("must be > 0", keyPath: "connect_timeout_s") }
        guard requestTimeoutSeconds > 0 else { throw ConfigurationError("must be > 0", keyPath: "request_timeout_s") }
        guard (1024...(256 << 20)).contains(maxPageBytes) else {
            throw ConfigurationError("must be between 1024 and 268435456", keyPath: "max_page_bytes")
        }
        guard maxPagesPerPoll >= 1 else { throw ConfigurationError("must be at least 1", keyPath: "max_pages_per_poll") }
    }

    /// One instance of a deployment consumes the upstream at a time (its cursor lives in the store).
    public var runsOncePerDeployment: Bool { true }

    /// Builds the source.
    public func makeSource(name: String) throws(ConfigurationError) -> any SourceAdapter {
        RESTSource(name: name, configuration: self, tlsConfiguration: try tls.makeConfiguration(), readers: readers(name))
    }

    /// Builds the replay normaliser.
    public func makeReplayNormaliser(name: String) throws(ConfigurationError) -> any ReplayNormaliser {
        RESTReplayNormaliser(readers: readers(name))
    }

    /// A throwaway poller of one URL for `herald tail --source`: nothing is stored, so it starts at the
    /// first page every time.
    public func makePreviewSource(name: String, url: String) throws(ConfigurationError) -> any SourceAdapter {
        var copy = self
        copy.endpoints = [endpoints[0]]
        copy.endpoints[0].url = url
        return try copy.makeSource(name: name)
    }

    func readers(_ name: String) -> [RESTPageReader] {
        endpoints.map { RESTPageReader(adapter: name, endpoint: $0, maxItemBytes: maxPageBytes) }
    }
}
