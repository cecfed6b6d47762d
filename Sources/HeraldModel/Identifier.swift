/// A typed, string-backed identifier. `Kind` is a phantom type so a ``UserID`` can never be passed
/// where a ``ChatID`` is expected.
public struct Identifier<Kind: IdentifierKind>: RawRepresentable, Hashable, Comparable, Codable, Sendable,
    ExpressibleByStringLiteral, CustomStringConvertible
{
    /// The identifier as it appears on the wire.
    public let rawValue: String
    /// `rawValue`'s hash, computed once with the process's seeded hasher: the router looks an identifier
    /// up in dictionaries dozens of times per event, and hashing the string each time was a fifth of
    /// its work. Seeded like every other hash, so chosen identifiers collide no more easily.
    private let rawHash: Int

    /// Wraps a raw identifier string.
    public init(rawValue: String) {
        self.rawValue = rawValue
        rawHash = rawValue.hashValue
    }
    /// Wraps a raw identifier string.
    public init(_ rawValue: String) { self.init(rawValue: rawValue) }
    /// Creates an identifier from a string literal.
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    /// Decodes from a plain JSON string.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    /// Equal raw strings (the stored hashes tell most unequal ones apart without comparing them).
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.rawHash == rhs.rawHash && lhs.rawValue == rhs.rawValue }

    /// Feeds the stored hash of the raw string.
    public func hash(into hasher: inout Hasher) { hasher.combine(rawHash) }

    /// Encodes as a plain JSON string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// Orders identifiers by their raw strings.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The raw identifier.
    public var description: String { rawValue }
}

/// Marks the phantom types that distinguish identifier kinds.
public protocol IdentifierKind: Sendable {}

/// Phantom kind of ``UserID``.
public enum UserKind: IdentifierKind {}
/// Phantom kind of ``ChatID``.
public enum ChatKind: IdentifierKind {}
/// Phantom kind of ``MessageID``.
public enum MessageKind: IdentifierKind {}

/// Identifies a user (a chat participant).
public typealias UserID = Identifier<UserKind>
/// Identifies a chat.
public typealias ChatID = Identifier<ChatKind>
/// Identifies a message within its chat.
public typealias MessageID = Identifier<MessageKind>
