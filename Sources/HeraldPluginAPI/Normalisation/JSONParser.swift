/// A small, strict JSON parser (RFC 8259) producing ``JSONValue``. Hand-written because payload
/// parsing is on every message's path; it allocates only for the values it returns and never
/// throws on the happy path. Nesting is limited to ``maxDepth`` so hostile payloads cannot
/// exhaust the stack.
///
/// One grammar serves three readers: ``parse(_:)`` builds the whole document, `skipValue` checks a value
/// without building it, and ``capture(_:_:)`` builds only the values a ``PointerTree`` names. They share
/// the loops over members and items below, so a document is refused with the same reason and offset
/// whichever reads it.
struct JSONParser {
    static let maxDepth = 64

    struct Failure: Error {
        var offset: Int
        var message: String
    }

    let bytes: [UInt8]
    var index = 0

    /// Parses a whole document; trailing non-whitespace is an error.
    static func parse(_ bytes: [UInt8]) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        let value = try parser.value(depth: 0)
        try parser.end()
        return value
    }

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// Checks that only whitespace follows the document.
    mutating func end() throws(Failure) {
        skipWhitespace()
        guard index == bytes.count else { throw Failure(offset: index, message: "unexpected data after the document") }
    }

    mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
            index += 1
        }
    }

    func fail(_ message: String) -> Failure { Failure(offset: index, message: message) }

    /// Checks the depth, skips whitespace and returns the byte a value starts with.
    mutating func valueStart(depth: Int) throws(Failure) -> UInt8 {
        guard depth <= Self.maxDepth else { throw fail("nesting deeper than \(Self.maxDepth)") }
        skipWhitespace()
        guard index < bytes.count else { throw fail("unexpected end of data") }
        return bytes[index]
    }

    mutating func value(depth: Int) throws(Failure) -> JSONValue {
        switch try valueStart(depth: depth) {
        case UInt8(ascii: "{"):
            // Room for a typical event's fields at once, instead of regrowing the table as they arrive.
            var members = [String: JSONValue](minimumCapacity: 8)
            try forEachMember { parser throws(Failure) in try parser.string() } value: { parser, key throws(Failure) in
                members[key] = try parser.value(depth: depth + 1)
            }
            return .object(members)
        case UInt8(ascii: "["):
            var items: [JSONValue] = []
            try forEachItem { parser, _ throws(Failure) in items.append(try parser.value(depth: depth + 1)) }
            return .array(items)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: return .number(try number())
        }
    }

    mutating func literal(_ text: StaticString) throws(Failure) {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw fail("invalid literal") }
        let expected = UnsafeBufferPointer(start: text.utf8Start, count: count)
        for offset in 0..<count where bytes[index + offset] != expected[offset] { throw fail("invalid literal") }
        index += count
    }

    /// Reads an object from its `{`: `key` reads each key from its opening quote, `value` the value after
    /// the colon.
    mutating func forEachMember<Key>(key: (inout JSONParser) throws(Failure) -> Key,
                                     value: (inout JSONParser, Key) throws(Failure) -> Void) throws(Failure) {
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a key") }
            let name = try key(&self)
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            try value(&self, name)
            skipWhitespace()
            guard index < bytes.count else { throw fail("unterminated object") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return }
            throw fail("expected ',' or '}'")
        }
    }

    /// Reads an array from its `[`: `item` reads each item, given its position.
    mutating func forEachItem(_ item: (inout JSONParser, Int) throws(Failure) -> Void) throws(Failure) {
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return
        }
        var position = 0
        while true {
            try item(&self, position)
            position += 1
            skipWhitespace()
            guard index < bytes.count else { throw fail("unterminated array") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return }
            throw fail("expected ',' or ']'")
        }
    }
}
