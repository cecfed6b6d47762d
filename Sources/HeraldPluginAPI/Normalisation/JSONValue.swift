import Foundation

/// A parsed JSON document, for field mapping by JSON pointer.
public enum JSONValue: Sendable, Hashable {
    /// `null`
    case null
    /// `true` / `false`
    case bool(Bool)
    /// Any number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// Parses a JSON document.
    /// - Returns: the value, or `nil` with a reason when the bytes are not valid JSON.
    public static func parse(_ bytes: [UInt8]) -> Result<JSONValue, JSONSyntaxError> {
        do throws(JSONParser.Failure) {
            return .success(try JSONParser.parse(bytes))
        } catch {
            return .failure(JSONSyntaxError(offset: error.offset, message: error.message))
        }
    }

    /// The JSON type's name, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// Resolves an RFC 6901 JSON pointer such as `/message/from` (`~1` is `/`, `~0` is `~`).
    /// - Returns: the value, or `nil` when any step is missing.
    public func value(at pointer: String) -> JSONValue? {
        guard !pointer.isEmpty else { return self }
        // Fast path for the common one-level pointer ("/id"), over UTF-8 bytes: it runs for every
        // field of every payload, and slicing the `String` itself would walk grapheme clusters.
        if case .object(let members) = self, pointer.utf8.first == UInt8(ascii: "/") {
            let key = pointer.utf8.dropFirst()
            if !key.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "~") }) {
                return members[String(Substring(key))]
            }
        }
        var current = self
        for token in pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            let key = token.contains("~")
                ? token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~") : String(token)
            switch current {
            case .object(let members):
                guard let next = members[key] else { return nil }
                current = next
            case .array(let items):
                guard let index = Int(key), items.indices.contains(index) else { return nil }
                current = items[index]
            default:
                return nil
            }
        }
        return current
    }
}

/// Why bytes are not valid JSON, and where.
public struct JSONSyntaxError: Error, Sendable, Hashable {
    /// Byte offset of the problem.
    public var offset: Int
    /// What is wrong.
    public var message: String
}
