/// A point in time as whole milliseconds since the Unix epoch: what the store keeps and what
/// orders messages. Plain integers keep events `Sendable`, `Codable` and exactly comparable.
public struct Timestamp: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public let milliseconds: Int64

    /// Creates a timestamp from milliseconds since the epoch.
    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    /// Decodes from a JSON integer of milliseconds.
    public init(from decoder: any Decoder) throws {
        milliseconds = try decoder.singleValueContainer().decode(Int64.self)
    }

    /// Encodes as a JSON integer of milliseconds.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(milliseconds)
    }

    /// Returns this time moved by `milliseconds`.
    public func adding(milliseconds delta: Int64) -> Timestamp { Timestamp(milliseconds: milliseconds + delta) }

    /// Orders timestamps chronologically.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.milliseconds < rhs.milliseconds }

    /// The milliseconds, for logs.
    public var description: String { "\(milliseconds)ms" }
}

/// Where "now" comes from. Injected everywhere time matters (presence expiry, provenance, backoff)
/// so tests can drive time by hand.
public protocol WallClock: Sendable {
    /// The current time.
    func now() -> Timestamp
}
