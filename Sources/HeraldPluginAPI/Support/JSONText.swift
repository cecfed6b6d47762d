/// How Herald's hand-written JSON writers spell strings and integers: the one place that escapes text
/// and turns integers into digits, for ``JSONObjectWriter``, the writers that append to arrays and
/// ``JSONValue/jsonBytes``.
enum JSONText {
    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")

    /// Hands `utf8` to `emit` as JSON string content (without the quotes): runs that need no escaping
    /// whole, and an escape sequence for each quote, backslash and control character.
    static func escape(_ utf8: UnsafeBufferPointer<UInt8>, _ emit: (UnsafeBufferPointer<UInt8>) -> Void) {
        var runStart = 0
        for index in utf8.indices {
            let byte = utf8[index]
            guard byte < 0x20 || byte == quote || byte == backslash else { continue }
            emit(UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
            escapeSequence(for: byte, emit)
            runStart = index + 1
        }
        emit(UnsafeBufferPointer(rebasing: utf8[runStart...]))
    }

    /// `\"`, `\\`, `\n`, `\r`, `\t`, or `\u00XX` for the other control characters.
    private static func escapeSequence(for byte: UInt8, _ emit: (UnsafeBufferPointer<UInt8>) -> Void) {
        let hex: StaticString = "0123456789abcdef"
        var sequence: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (backslash, byte, 0, 0, 0, 0)
        var length = 2
        switch byte {
        case quote, backslash: break
        case 0x0A: sequence.1 = UInt8(ascii: "n")
        case 0x0D: sequence.1 = UInt8(ascii: "r")
        case 0x09: sequence.1 = UInt8(ascii: "t")
        default:
            hex.withUTF8Buffer { digits in
                sequence = (backslash, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), digits[Int(byte >> 4)], digits[Int(byte & 0xF)])
            }
            length = 6
        }
        withUnsafeBytes(of: &sequence) { raw in
            emit(UnsafeBufferPointer(rebasing: raw.assumingMemoryBound(to: UInt8.self)[..<length]))
        }
    }

    /// Hands `value`'s decimal digits (after a `-` for a negative value) to `emit` in one piece.
    static func digits<I: FixedWidthInteger>(of value: I, _ emit: (UnsafeBufferPointer<UInt8>) -> Void) {
        precondition(I.bitWidth <= 64, "JSON integers are 64 bits at most")
        var storage: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: a sign and 20 digits fit
        withUnsafeMutableBytes(of: &storage) { raw in
            let text = raw.assumingMemoryBound(to: UInt8.self)
            var position = text.count
            var magnitude = UInt64(value.magnitude)
            repeat {
                position -= 1
                text[position] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                position -= 1
                text[position] = UInt8(ascii: "-")
            }
            emit(UnsafeBufferPointer(rebasing: text[position...]))
        }
    }

    /// Appends `string` as a JSON string, quotes included.
    static func append(string: String, to bytes: inout [UInt8]) {
        bytes.append(quote)
        var string = string
        string.withUTF8 { utf8 in
            escape(utf8) { bytes.append(contentsOf: $0) }
        }
        bytes.append(quote)
    }

    /// Appends an integer's decimal digits without building a `String`.
    static func append<I: FixedWidthInteger>(integer value: I, to bytes: inout [UInt8]) {
        digits(of: value) { bytes.append(contentsOf: $0) }
    }
}
