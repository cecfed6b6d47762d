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

    /// Resolves an RFC 6901 JSON pointer such as `/message/from` (`~1` is `/`, `~0` is `~`). Parse a
    /// pointer used for every payload once, as a ``JSONPointer``.
    /// - Returns: the value, or `nil` when any step is missing.
    public func value(at pointer: String) -> JSONValue? { value(at: JSONPointer(pointer)) }
}

/// Why bytes are not valid JSON, and where.
public struct JSONSyntaxError: Error, Sendable, Hashable {
    /// Byte offset of the problem.
    public var offset: Int
    /// What is wrong.
    public var message: String
}
