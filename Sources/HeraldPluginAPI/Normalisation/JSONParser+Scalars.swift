extension JSONParser {
    /// Reads a string from its opening quote.
    mutating func string() throws(Failure) -> String {
        index += 1
        let start = index
        // Fast path: no escapes.
        try skipPlainText()
        guard index < bytes.count else { throw fail("unterminated string") }
        if bytes[index] == UInt8(ascii: "\"") {
            index += 1
            return try text(bytes[start..<(index - 1)], at: start)
        }
        var scalars = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return try text(scalars[...], at: start)
            }
            guard byte >= 0x20 else { throw fail("control character in string") }
            if byte != UInt8(ascii: "\\") {
                scalars.append(byte)
                index += 1
                continue
            }
            index += 1
            UTF8.encode(try escapedScalar()) { scalars.append($0) }
        }
        throw fail("unterminated string")
    }

    /// Checks a string from its opening quote without building it. The bytes must be valid UTF-8 (the
    /// decoder checks a whole payload first): the text between two quotes then is too.
    mutating func skipString() throws(Failure) {
        index += 1
        while true {
            try skipPlainText()
            guard index < bytes.count else { throw fail("unterminated string") }
            if bytes[index] == UInt8(ascii: "\"") {
                index += 1
                return
            }
            index += 1
            _ = try escapedScalar()
        }
    }

    /// Moves over text up to a quote, a backslash or the end; a control character is an error.
    mutating func skipPlainText() throws(Failure) {
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
            guard bytes[index] >= 0x20 else { throw fail("control character in string") }
            index += 1
        }
    }

    /// Reads the escape after a backslash: the code point it stands for.
    mutating func escapedScalar() throws(Failure) -> Unicode.Scalar {
        guard index < bytes.count else { throw fail("unterminated escape") }
        let escape = bytes[index]
        index += 1
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return Unicode.Scalar(escape)
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            var code = try hex4()
            if (0xD800..<0xDC00).contains(code) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw fail("unpaired surrogate")
                }
                index += 2
                let low = try hex4()
                guard (0xDC00..<0xE000).contains(low) else { throw fail("unpaired surrogate") }
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(code) {
                throw fail("unpaired surrogate")
            }
            guard let scalar = Unicode.Scalar(code) else { throw fail("invalid code point") }
            return scalar
        default:
            throw fail("invalid escape")
        }
    }

    /// A string's bytes as text. JSON is UTF-8 (RFC 8259): invalid bytes are an error, never replaced, so
    /// an identifier cannot change its length or its bytes on the way in.
    func text(_ slice: ArraySlice<UInt8>, at offset: Int) throws(Failure) -> String {
        // Validated in place, then copied once (String(validating:) goes through generic code per string).
        do {
            return String(copying: try UTF8Span(validating: slice.span))
        } catch {
            throw Failure(offset: offset, message: "invalid UTF-8 in a string")
        }
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw fail("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    mutating func number() throws(Failure) -> Double {
        let start = index
        switch try skipNumberText() {
        case .integer(let magnitude, let negative): return negative ? -Double(magnitude) : Double(magnitude)
        case .inRange, .unchecked: return try numberValue(from: start)
        }
    }

    /// Checks a number without reading its value where its form alone shows that it is in range.
    mutating func skipNumber() throws(Failure) {
        let start = index
        if case .unchecked = try skipNumberText() { _ = try numberValue(from: start) }
    }

    /// What a number's text shows of its value.
    enum NumberForm {
        /// An integer of at most 15 digits, read on the way: a double holds it exactly.
        case integer(magnitude: Int64, negative: Bool)
        /// No exponent and at most 308 digits before the point: below 10³⁰⁸, so in range.
        case inRange
        /// Anything else: only its value shows whether it is in range.
        case unchecked
    }

    /// Moves over a number's text.
    private mutating func skipNumberText() throws(Failure) -> NumberForm {
        let negative = index < bytes.count && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        let digitsStart = index
        var magnitude: Int64 = 0
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
            if index - digitsStart < 15 { magnitude = magnitude * 10 + Int64(bytes[index] - UInt8(ascii: "0")) }
            index += 1
        }
        guard index > digitsStart else { throw fail("invalid value") }
        guard bytes[digitsStart] != UInt8(ascii: "0") || index - digitsStart == 1 else { throw fail("leading zero") }
        let integerDigits = index - digitsStart
        var fractional = false
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let fraction = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > fraction else { throw fail("invalid number") }
            fractional = true
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") else {
            if !fractional, integerDigits <= 15 { return .integer(magnitude: magnitude, negative: negative) }
            return integerDigits <= 308 ? .inRange : .unchecked
        }
        index += 1
        if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
        let exponent = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        guard index > exponent else { throw fail("invalid number") }
        return .unchecked
    }

    /// The value of the number whose text runs from `start` to here.
    private func numberValue(from start: Int) throws(Failure) -> Double {
        guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)) else { throw fail("invalid number") }
        // 1e400 reads as infinity, which no JSON can write back and no time or count can hold.
        guard value.isFinite else { throw Failure(offset: start, message: "number out of range") }
        return value
    }
}
