/// A typed, string-backed identifier. `Kind` is a phantom type so a ``UserID`` can never be passed
/// where a ``ChatID`` is expected.
///
/// Identifiers are opaque: two are the same exactly when their UTF-8 bytes are, and they sort by those
/// bytes. That is how both stores compare them (SQLite's `BINARY` collation, PostgreSQL's `"C"`) and how
/// an MQTT broker compares the topics and client identities they come from. `String`'s own equality
/// would also join canonically equivalent spellings (a precomposed é and e + U+0301), which the stores
/// and the broker keep apart.
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

    /// Whether the raw strings have the same UTF-8 bytes.
    @inlinable
    public static func == (lhs: Self, rhs: Self) -> Bool { RawIdentifier.equal(lhs.rawValue, rhs.rawValue) }

    /// Hashes the raw string as `String` does. Identifiers with the same bytes are equal strings, so they
    /// hash alike; canonically equivalent spellings also hash alike, and are then told apart by `==`.
    @inlinable
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    /// Orders identifiers by their raw strings' UTF-8 bytes, as `ORDER BY` does in both stores.
    @inlinable
    public static func < (lhs: Self, rhs: Self) -> Bool { RawIdentifier.precedes(lhs.rawValue, rhs.rawValue) }

    /// The raw identifier.
    public var description: String { rawValue }

    /// How the raw strings' UTF-8 bytes compare, in one pass: negative when `self` sorts first (as `<`
    /// orders them), zero for the same bytes (`==`), positive when `other` sorts first. A sort by several
    /// keys asks this once for each key instead of `==` and then `<`.
    @inlinable
    public func byteOrder(comparedTo other: Self) -> Int { RawIdentifier.order(rawValue, other.rawValue) }
}

extension Identifier: CodingKeyRepresentable {
    /// The raw identifier as a key: a dictionary keyed by identifiers codes as an object.
    public var codingKey: any CodingKey { IdentifierCodingKey(stringValue: rawValue) }

    /// Takes a key's string as the raw identifier.
    public init?<Key: CodingKey>(codingKey: Key) { self.init(rawValue: codingKey.stringValue) }
}

/// Byte-wise equality and order of raw identifiers: not generic over the identifier's kind, so a call needs
/// no type metadata, and inlinable, so other modules specialise it.
@usableFromInline
enum RawIdentifier {
    /// Whether two raw identifiers have the same UTF-8 bytes (at once when they share a representation).
    @inlinable
    static func equal(_ lhs: String, _ rhs: String) -> Bool {
        if sameRepresentation(lhs, rhs) { return true }
        // Strings with the same bytes are equal strings: `String`'s inequality (quick for two distinct
        // identifiers) is a sure "different", and only its "equal" needs the bytes checked.
        guard lhs == rhs, lhs.utf8.count == rhs.utf8.count else { return false }
        let same = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right in sameBytes(left, right) }
        }
        return (same ?? nil) ?? lhs.utf8.elementsEqual(rhs.utf8)
    }

    /// Whether two strings are the same value bit for bit: the same storage, or the same bytes held inline
    /// (as `String`'s own equality checks first). Different bits may still hold the same bytes.
    @inlinable
    static func sameRepresentation(_ lhs: String, _ rhs: String) -> Bool {
        withUnsafeBytes(of: lhs) { left in
            withUnsafeBytes(of: rhs) { right in
                guard left.count == 16 else { return false }
                return left.loadUnaligned(as: UInt64.self) == right.loadUnaligned(as: UInt64.self)
                    && left.loadUnaligned(fromByteOffset: 8, as: UInt64.self) == right.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            }
        }
    }

    /// Whether two buffers of one length hold the same bytes, compared eight at a time.
    @inlinable
    static func sameBytes(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
        let left = UnsafeRawBufferPointer(lhs), right = UnsafeRawBufferPointer(rhs)
        var offset = 0
        while offset + 8 <= left.count {
            guard left.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                == right.loadUnaligned(fromByteOffset: offset, as: UInt64.self) else { return false }
            offset += 8
        }
        while offset < left.count {
            guard left[offset] == right[offset] else { return false }
            offset += 1
        }
        return true
    }

    /// How `lhs`'s UTF-8 bytes compare with `rhs`'s: negative, zero or positive as they sort before, the
    /// same as or after them.
    @inlinable
    static func order(_ lhs: String, _ rhs: String) -> Int {
        if sameRepresentation(lhs, rhs) { return 0 }
        let order = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right in orderOfBytes(left, right) }
        }
        if let order = order ?? nil { return order }
        var left = lhs.utf8.makeIterator(), right = rhs.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case let (l?, r?): if l != r { return Int(l) - Int(r) }
            case (nil, nil): return 0
            case (nil, _?): return -1
            case (_?, nil): return 1
            }
        }
    }

    /// How two byte buffers compare: the first byte that differs decides, else the shorter sorts first.
    @inlinable
    static func orderOfBytes(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Int {
        var offset = 0
        let common = min(lhs.count, rhs.count)
        while offset < common {
            if lhs[offset] != rhs[offset] { return Int(lhs[offset]) - Int(rhs[offset]) }
            offset += 1
        }
        return lhs.count - rhs.count
    }

    /// Whether `lhs`'s UTF-8 bytes sort before `rhs`'s.
    @inlinable
    static func precedes(_ lhs: String, _ rhs: String) -> Bool { order(lhs, rhs) < 0 }
}

/// The coding key of an identifier used as a dictionary key.
private struct IdentifierCodingKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
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
