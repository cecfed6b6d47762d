import Foundation
import NetworkAdapterSupport
public import HeraldPluginAPI

/// One polled endpoint of a `type: rest` source: where, how often, where the events sit in a page,
/// and how the next page is found.
public struct RESTEndpoint: Decodable, Sendable {
    /// Unique within the source; names the endpoint's checkpoints, logs and metrics.
    public var name: String
    /// The URL polled (the cursor is added to it as a query parameter, or replaces it for `link`).
    public var url: String
    /// Seconds between polls once a poll has read everything.
    public var intervalSeconds: Double
    /// Random spread of the interval, as a fraction of it (0.1 = ±10%).
    public var jitter: Double
    /// JSON pointer to the array of events in a page; `""` when the page itself is the array.
    public var items: String
    /// What the items are; `auto` reads each item's `type`.
    public var kind: PayloadKind
    /// Where fields sit in an item (JSON pointers).
    public var mapping: FieldMapping
    /// How times are read.
    public var timeFormat: TimeFormat
    /// How the next page is found; `nil` polls the same URL every time (with ETag / Last-Modified).
    public var cursor: RESTCursor?

    enum CodingKeys: String, CodingKey {
        case name, url, intervalSeconds = "interval_s", jitter, items, kind, mapping, timeFormat = "time_format", cursor
    }

    /// Decodes an `endpoints` element.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        url = try container.decode(String.self, forKey: .url)
        intervalSeconds = try container.decodeIfPresent(Double.self, forKey: .intervalSeconds) ?? 10
        jitter = try container.decodeIfPresent(Double.self, forKey: .jitter) ?? 0.1
        items = try container.decodeIfPresent(String.self, forKey: .items) ?? "/items"
        kind = try container.decodeIfPresent(PayloadKind.self, forKey: .kind) ?? .fromPayload
        mapping = try container.decodeIfPresent(FieldMapping.self, forKey: .mapping) ?? FieldMapping()
        timeFormat = try container.decodeIfPresent(TimeFormat.self, forKey: .timeFormat) ?? .auto
        cursor = try container.decodeIfPresent(RESTCursor.self, forKey: .cursor)
    }

    /// Offline checks; `keyPath` is this element's path.
    func validate(keyPath: String) throws(ConfigurationError) {
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || "-_".contains($0) }) else {
            throw ConfigurationError("use letters, digits, - and _", keyPath: "\(keyPath).name")
        }
        guard let components = URLComponents(string: url), ["http", "https"].contains(components.scheme ?? ""),
              components.host?.isEmpty == false else {
            throw ConfigurationError("\"\(url)\" is not an http:// or https:// URL", keyPath: "\(keyPath).url")
        }
        guard intervalSeconds >= 0.05 else { throw ConfigurationError("must be at least 0.05", keyPath: "\(keyPath).interval_s") }
        guard (0...1).contains(jitter) else { throw ConfigurationError("must be between 0 and 1", keyPath: "\(keyPath).jitter") }
        guard items.isEmpty || items.hasPrefix("/") else {
            throw ConfigurationError("must be a JSON pointer like /items, or \"\" for the whole page", keyPath: "\(keyPath).items")
        }
        try mapping.validatePointers(keyPath: "\(keyPath).mapping")
        try cursor?.validate(keyPath: "\(keyPath).cursor")
    }

    /// The URL for a stored cursor.
    func requestURL(cursor value: String?) -> String {
        guard let value, let cursor else { return url }
        switch cursor.from {
        case .link: return value
        case .field: return URLQuery.setting(cursor.param, to: value, in: url)
        }
    }
}

/// How a REST endpoint pages.
public struct RESTCursor: Decodable, Sendable {
    /// Where the next position comes from.
    public enum Source: String, Decodable, Sendable, CaseIterable {
        /// A field of the page (``pointer``), sent back as the query parameter ``param``.
        case field
        /// The `Link: <…>; rel="next"` response header: the next URL as it is.
        case link
    }

    /// `field` or `link`.
    public var from: Source
    /// For `field`: JSON pointer to the next cursor in a page (a string or number; absent or null at the end).
    public var pointer: String?
    /// For `field`: the query parameter that carries the cursor; default `cursor`.
    public var param: String

    enum CodingKeys: String, CodingKey { case from, pointer, param }

    /// Decodes the block.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        from = try container.decode(Source.self, forKey: .from)
        pointer = try container.decodeIfPresent(String.self, forKey: .pointer)
        param = try container.decodeIfPresent(String.self, forKey: .param) ?? "cursor"
    }

    func validate(keyPath: String) throws(ConfigurationError) {
        if from == .field {
            guard let pointer, pointer.hasPrefix("/") else {
                throw ConfigurationError("cursor from a field needs a JSON pointer, e.g. /next_cursor", keyPath: "\(keyPath).pointer")
            }
            guard !param.isEmpty else { throw ConfigurationError("must not be empty", keyPath: "\(keyPath).param") }
        }
    }
}
