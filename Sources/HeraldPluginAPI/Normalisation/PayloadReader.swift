import Foundation

/// Typed field access over a payload, producing ``Rejection``s that name the field and pointer.
struct PayloadReader {
    /// Where the fields' values come from.
    enum Fields {
        /// A parsed document, read through the pointers.
        case document(JSONValue)
        /// The values read in one pass (``JSONParser/capture(_:_:)``), by ``PayloadField``.
        case captured([JSONValue?])
    }

    let fields: Fields
    let pointers: FieldPointers
    let timeFormat: TimeFormat

    /// The value of `field`, `nil` when the payload has none.
    func value(_ field: PayloadField) -> JSONValue? {
        switch fields {
        case .document(let document): document.value(at: pointers[field])
        case .captured(let values): values[field.rawValue]
        }
    }

    func string(_ field: PayloadField) throws(Rejection) -> String {
        switch value(field) {
        case .string(let value): return value
        case nil, .null?: throw Rejection(.missingField, "field \(field.name) (\(pointers[field].text)) is missing")
        case let other?: throw Rejection(.invalidField, "field \(field.name) (\(pointers[field].text)): expected a string, found \(other.typeName)")
        }
    }

    /// An identifier: a non-empty string without `/`, `+`, `#` or NUL (they would break topic ACLs),
    /// or an integer.
    func identifier(_ field: PayloadField) throws(Rejection) -> String {
        let text: String
        switch value(field) {
        case .number(let value) where value == value.rounded() && abs(value) < 1e15: text = String(Int64(value))
        default: text = try string(field)
        }
        try Self.checkIdentifier(text, field: field.name, pointer: pointers[field].text)
        return text
    }

    /// Byte-wise (the forbidden characters are ASCII, so no UTF-8 sequence can hide one); this runs
    /// for every identifier of every message.
    static func checkIdentifier(_ text: String, field: String, pointer: @autoclosure () -> String) throws(Rejection) {
        let bytes = text.utf8
        guard !bytes.isEmpty, bytes.count <= EventPayloadDecoder.maxIdentifierLength,
              !bytes.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") || $0 == 0 }) else {
            throw Rejection(.invalidField, "field \(field) (\(pointer())): \"\(text.prefix(40))\" is not a valid identifier")
        }
    }

    /// An identifier the topic may already bind. With a binding, the payload may repeat it but not differ.
    func boundIdentifier(_ field: PayloadField, bound: String?) throws(Rejection) -> String {
        guard let bound else { return try identifier(field) }
        if let claimed = value(field), !Self.names(claimed, bound) {
            throw Rejection(.identityMismatch, "payload names \(field.name) \(claimed.shortText) but the topic says \"\(bound)\"")
        }
        return bound
    }

    /// Whether a payload's value names the identifier `bound`, compared as identifiers are (byte for byte,
    /// see `Identifier`): the same name spelled otherwise is someone else.
    static func names(_ claimed: JSONValue, _ bound: String) -> Bool {
        guard case .string(let text) = claimed else { return false }
        return UserID(text) == UserID(bound)
    }

    func optionalIdentifiers(_ field: PayloadField) throws(Rejection) -> [String]? {
        let pointer = pointers[field]
        switch value(field) {
        case nil, .null?: return nil
        case .array(let items)?:
            var result: [String] = []
            for (index, item) in items.enumerated() {
                guard case .string(let text) = item else {
                    throw Rejection(.invalidField, "field \(field.name) (\(pointer.text)/\(index)): expected a string, found \(item.typeName)")
                }
                try Self.checkIdentifier(text, field: field.name, pointer: "\(pointer.text)/\(index)")
                result.append(text)
            }
            return result
        case let other?: throw Rejection(.invalidField, "field \(field.name) (\(pointer.text)): expected an array, found \(other.typeName)")
        }
    }

    /// Times Herald accepts, in milliseconds since the Unix epoch: from 1970 to below 10¹⁶ (year 318,857),
    /// whatever form they came in, so every accepted time converts to an integer and back.
    static func timestamp(_ milliseconds: Double) -> Timestamp? {
        guard milliseconds.isFinite, milliseconds >= 0, milliseconds < 1e16 else { return nil }
        return Timestamp(milliseconds: Int64(milliseconds.rounded()))
    }

    func time(_ field: PayloadField) throws(Rejection) -> Timestamp {
        guard let value = try optionalTime(field) else {
            throw Rejection(.missingField, "field \(field.name) (\(pointers[field].text)) is missing")
        }
        return value
    }

    func optionalTime(_ field: PayloadField) throws(Rejection) -> Timestamp? {
        let (pointer, name) = (pointers[field], field.name)
        switch value(field) {
        case nil, .null?: return nil
        case .number(let value)?:
            let milliseconds = switch timeFormat {
            case .unixMilliseconds: value
            case .unixSeconds: value * 1000
            default: value > 1e11 ? value : value * 1000
            }
            guard timeFormat != .rfc3339, let time = Self.timestamp(milliseconds) else {
                throw Rejection(.invalidField, "field \(name) (\(pointer.text)): \(value) is not a valid time")
            }
            return time
        case .string(let text)? where timeFormat == .auto || timeFormat == .rfc3339:
            guard let date = RFC3339.parse(text) else {
                throw Rejection(.invalidField, "field \(name) (\(pointer.text)): \"\(text.prefix(40))\" is not an RFC 3339 time")
            }
            guard let time = Self.timestamp(date.timeIntervalSince1970 * 1000) else {
                throw Rejection(.invalidField, "field \(name) (\(pointer.text)): \"\(text.prefix(40))\" is before 1970 or too far ahead")
            }
            return time
        case let other?:
            throw Rejection(.invalidField, "field \(name) (\(pointer.text)): expected a time, found \(other.typeName)")
        }
    }
}

/// RFC 3339 parsing with and without fractional seconds.
enum RFC3339 {
    static func parse(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle())
    }
}

extension JSONValue {
    /// A short rendering for error messages.
    var shortText: String {
        switch self {
        case .string(let text): "\"\(text.prefix(40))\""
        case .number(let value): "\(value)"
        default: typeName
        }
    }
}
