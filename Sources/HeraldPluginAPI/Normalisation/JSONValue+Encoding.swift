extension JSONValue {
    /// The value as compact JSON (object keys sorted, so equal values give equal bytes). Used to keep
    /// one element of a larger document (a REST page item) as the raw bytes of a dead letter.
    public var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        append(to: &out)
        return out
    }

    private func append(to out: inout [UInt8]) {
        switch self {
        case .null: out += Array("null".utf8)
        case .bool(let value): out += Array((value ? "true" : "false").utf8)
        case .number(let value):
            if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
                out += Array(String(Int64(value)).utf8)
            } else {
                out += Array("\(value)".utf8)
            }
        case .string(let value): Self.appendString(value, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                item.append(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.appendString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                members[key]?.append(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func appendString(_ value: String, to out: inout [UInt8]) {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case UInt8(ascii: "\n"): out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case UInt8(ascii: "\r"): out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case UInt8(ascii: "\t"): out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20: out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
