/// A typed, string-backed identifier. `Kind` is a phantom type so a ``UserID`` can never be passed
/// where a ``ChatID`` is expected.
public struct Identifier<Kind: IdentifierKind>: RawRepresentable, Hashable, Comparable, Codable, Sendable,
    ExpressibleByStringLiteral, CustomStringConvertible
{
    /// The identifier as it appears on the wire.
    public let rawValue: String

    /// Wraps a raw identifier string.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Wraps a raw identifier string.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// Creates an identifier from a string literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// Decodes from a plain JSON string.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

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
