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
                JSONText.append(integer: Int64(value), to: &out)
            } else {
                out += Array("\(value)".utf8)
            }
        case .string(let value): JSONText.append(string: value, to: &out)
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
                JSONText.append(string: key, to: &out)
                out.append(UInt8(ascii: ":"))
                members[key]?.append(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}
