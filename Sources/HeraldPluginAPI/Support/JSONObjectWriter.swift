/// The fields of one flat JSON object, named in code and written in the order given.
protocol JSONFields {
    /// A string field.
    mutating func field(_ name: StaticString, _ value: String)
    /// An integer field, in decimal (64 bits at most).
    mutating func field<I: FixedWidthInteger>(_ name: StaticString, _ value: I)
    /// An array of strings.
    mutating func field(_ name: StaticString, _ values: [String])
    /// An object of counts by chat, its keys sorted.
    mutating func field(_ name: StaticString, _ counts: [ChatID: Int])
}

/// A JSON object that names its fields through ``JSONFields``, so it can be measured and then written.
protocol JSONObjectDocument {
    /// Names the fields, in order.
    func fields<Fields: JSONFields>(into fields: inout Fields)
}

extension JSONObjectDocument {
    /// The most bytes the document takes (its fields named once, to measure them).
    var sizeBound: Int {
        var bound = JSONSizeBound()
        fields(into: &bound)
        return bound.bytes
    }

    /// Writes the document into `buffer`, which holds at least ``sizeBound`` bytes.
    /// - Returns: the bytes written.
    func write(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var writer = JSONObjectWriter(into: buffer)
        fields(into: &writer)
        return writer.finish()
    }

    /// The document's bytes, written straight into an array of ``sizeBound`` capacity: one allocation
    /// and no growth.
    var encoded: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: sizeBound) { buffer, count in count = write(into: buffer) }
    }
}

/// The most bytes a document's fields can take: every byte of text escaped as `\u00XX`, every integer
/// 20 characters.
struct JSONSizeBound: JSONFields {
    /// The braces so far.
    private(set) var bytes = 2

    mutating func field(_ name: StaticString, _ value: String) {
        bytes += Self.key(name) + Self.string(value)
    }

    mutating func field<I: FixedWidthInteger>(_ name: StaticString, _ value: I) {
        bytes += Self.key(name) + Self.integer
    }

    mutating func field(_ name: StaticString, _ values: [String]) {
        bytes += Self.key(name) + 2
        for value in values { bytes += Self.string(value) + 1 }
    }

    mutating func field(_ name: StaticString, _ counts: [ChatID: Int]) {
        bytes += Self.key(name) + 2
        for (key, _) in counts { bytes += Self.string(key.rawValue) + 2 + Self.integer }
    }

    /// The comma, the quotes and the colon around a name.
    private static func key(_ name: StaticString) -> Int { name.utf8CodeUnitCount + 4 }
    private static func string(_ value: String) -> Int { value.utf8.count * 6 + 2 }
    /// A sign and the 19 digits of the largest 64-bit magnitude.
    private static let integer = 20
}

/// Writes one flat JSON object into memory that ``JSONSizeBound`` measured for it. Every write checks
/// that it stays inside that memory.
struct JSONObjectWriter: JSONFields {
    private let base: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    private var count = 0
    private var first = true

    init(into buffer: UnsafeMutableBufferPointer<UInt8>) {
        guard let base = buffer.baseAddress, buffer.count >= 2 else { preconditionFailure("a JSON object takes two bytes at least") }
        self.base = base
        capacity = buffer.count
        write(UInt8(ascii: "{"))
    }

    mutating func field(_ name: StaticString, _ value: String) {
        key(name)
        write(string: value)
    }

    mutating func field<I: FixedWidthInteger>(_ name: StaticString, _ value: I) {
        key(name)
        JSONText.digits(of: value) { write($0) }
    }

    mutating func field(_ name: StaticString, _ values: [String]) {
        key(name)
        write(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { write(UInt8(ascii: ",")) }
            write(string: value)
        }
        write(UInt8(ascii: "]"))
    }

    mutating func field(_ name: StaticString, _ counts: [ChatID: Int]) {
        key(name)
        write(UInt8(ascii: "{"))
        for (index, (key, count)) in counts.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { write(UInt8(ascii: ",")) }
            write(string: key.rawValue)
            write(UInt8(ascii: ":"))
            JSONText.digits(of: count) { write($0) }
        }
        write(UInt8(ascii: "}"))
    }

    /// Closes the object.
    /// - Returns: the bytes written.
    mutating func finish() -> Int {
        write(UInt8(ascii: "}"))
        return count
    }

    /// A field name written in code: its bytes are copied as they are (names need no escaping).
    private mutating func key(_ name: StaticString) {
        if !first { write(UInt8(ascii: ",")) }
        first = false
        write(UInt8(ascii: "\""))
        name.withUTF8Buffer { write($0) }
        write(UInt8(ascii: "\""))
        write(UInt8(ascii: ":"))
    }

    private mutating func write(string: String) {
        write(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            JSONText.escape(utf8) { write($0) }
        }
        write(UInt8(ascii: "\""))
    }

    private mutating func write(_ byte: UInt8) {
        precondition(count < capacity, "JSON object larger than measured")
        base[count] = byte
        count += 1
    }

    private mutating func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        precondition(count + bytes.count <= capacity, "JSON object larger than measured")
        (base + count).update(from: source, count: bytes.count)
        count += bytes.count
    }
}
