import Foundation

/// An RFC 6901 JSON pointer split into its reference tokens once, so a lookup on every payload costs
/// one hash per level instead of re-reading the pointer's text.
public struct JSONPointer: Sendable, Hashable, CustomStringConvertible {
    /// The pointer as written, e.g. `/message/from` (for error messages).
    public let text: String
    /// Its reference tokens, unescaped (`~1` is `/`, `~0` is `~`); empty for the whole document.
    public let tokens: [String]

    /// Parses `text`. Text that neither is empty nor starts with `/` is not a pointer and names no
    /// value (configuration loading rejects it).
    public init(_ text: String) {
        self.text = text
        isPointer = text.isEmpty || text.utf8.first == UInt8(ascii: "/")
        tokens = !isPointer || text.isEmpty ? [] : text.utf8.dropFirst()
            .split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            .map { token in
                let raw = String(decoding: token, as: UTF8.self)
                return raw.contains("~") ? raw.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~") : raw
            }
    }

    /// `false` for text that is not a JSON pointer: it resolves to nothing.
    let isPointer: Bool

    /// The pointer as written (``text``).
    public var description: String { text }
}

extension JSONValue {
    /// Resolves a parsed pointer.
    /// - Returns: the value, or `nil` when any step is missing.
    public func value(at pointer: JSONPointer) -> JSONValue? {
        guard pointer.isPointer else { return nil }
        return value(tokens: pointer.tokens[...])
    }

    /// Resolves a pointer's reference tokens, from this value down.
    func value(tokens: ArraySlice<String>) -> JSONValue? {
        var current = self
        for token in tokens {
            switch current {
            case .object(let members):
                guard let next = members[token] else { return nil }
                current = next
            case .array(let items):
                guard let index = Int(token), items.indices.contains(index) else { return nil }
                current = items[index]
            default:
                return nil
            }
        }
        return current
    }
}
