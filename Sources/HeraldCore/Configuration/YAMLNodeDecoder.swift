import Foundation
import HeraldPluginAPI
import Yams

/// A `Decoder` over one Yams node. Scalars are read as the requested type (so `"8080"` and `8080`
/// both decode as an `Int`), strings are interpolated, and every error carries the node's position.
struct YAMLNodeDecoder: Decoder {
    let node: Node
    let session: YAMLDecodingSession
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .mapping(let mapping) = node else { throw mismatch("a mapping of keys") }
        session.noteMapping(mapping, at: codingPath)
        return KeyedDecodingContainer(YAMLKeyedContainer<Key>(mapping: mapping, decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .sequence(let sequence) = node else { throw mismatch("a list") }
        return YAMLUnkeyedContainer(items: Array(sequence), decoder: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func child(_ node: Node, key: any CodingKey) -> YAMLNodeDecoder {
        YAMLNodeDecoder(node: node, session: session, codingPath: codingPath + [key], userInfo: userInfo)
    }

    func mismatch(_ expected: String) -> ConfigurationError {
        let found = switch node {
        case .scalar(let scalar): "\"\(scalar.string.prefix(40))\""
        case .mapping: "a mapping"
        case .sequence: "a list"
        case .alias: "an alias"
        }
        return session.error("expected \(expected), found \(found)", node: node, path: codingPath)
    }

    /// The scalar text (interpolated), or a type error.
    func scalarText(expected: String) throws -> String {
        guard case .scalar(let scalar) = node else { throw mismatch(expected) }
        return try session.interpolate(scalar.string, node: node, path: codingPath)
    }

    var isNull: Bool {
        guard case .scalar(let scalar) = node, scalar.style == .plain else { return false }
        return ["", "~", "null", "Null", "NULL"].contains(scalar.string)
    }

    func parse<T: LosslessStringConvertible>(_ type: T.Type, expected: String) throws -> T {
        let text = try scalarText(expected: expected)
        guard let value = T(text.replacingOccurrences(of: "_", with: "")) else { throw mismatch(expected) }
        return value
    }
}

extension YAMLNodeDecoder: SingleValueDecodingContainer {
    func decodeNil() -> Bool { isNull }
    func decode(_ type: Bool.Type) throws -> Bool {
        switch try scalarText(expected: "true or false") {
        case "true", "True", "TRUE": return true
        case "false", "False", "FALSE": return false
        default: throw mismatch("true or false")
        }
    }
    func decode(_ type: String.Type) throws -> String { try scalarText(expected: "a string") }
    func decode(_ type: Double.Type) throws -> Double { try parse(type, expected: "a number") }
    func decode(_ type: Float.Type) throws -> Float { try parse(type, expected: "a number") }
    func decode(_ type: Int.Type) throws -> Int { try parse(type, expected: "a whole number") }
    func decode(_ type: Int8.Type) throws -> Int8 { try parse(type, expected: "a whole number") }
    func decode(_ type: Int16.Type) throws -> Int16 { try parse(type, expected: "a whole number") }
    func decode(_ type: Int32.Type) throws -> Int32 { try parse(type, expected: "a whole number") }
    func decode(_ type: Int64.Type) throws -> Int64 { try parse(type, expected: "a whole number") }
    func decode(_ type: UInt.Type) throws -> UInt { try parse(type, expected: "a whole number ≥ 0") }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try parse(type, expected: "a whole number ≥ 0") }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try parse(type, expected: "a whole number ≥ 0") }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try parse(type, expected: "a whole number ≥ 0") }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try parse(type, expected: "a whole number ≥ 0") }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        do {
            return try T(from: self)
        } catch let error as DecodingError {
            // Synthesised enum decoding reports bad raw values this way; place it at this node.
            if case .dataCorrupted = error, case .scalar(let scalar) = node {
                throw session.error("invalid value \"\(scalar.string.prefix(40))\"", node: node, path: codingPath)
            }
            throw error
        }
    }
}
