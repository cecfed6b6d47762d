extension JSONParser {
    /// Reads a whole document but builds only the values `tree`'s pointers name: checked like
    /// ``parse(_:)`` (the same failures at the same offsets), without a table for every object or a
    /// string for every key and value. `bytes` must be valid UTF-8.
    /// - Returns: the value of each pointer by its slot, `nil` where it names nothing; as
    ///   ``JSONValue/value(at:)`` resolves it in the parsed document, a repeated key's last value winning.
    static func capture(_ bytes: [UInt8], _ tree: PointerTree) throws(Failure) -> [JSONValue?] {
        var parser = JSONParser(bytes: bytes)
        var slots = [JSONValue?](repeating: nil, count: tree.slotCount)
        try parser.capture(at: 0, in: tree, into: &slots, depth: 0)
        try parser.end()
        return slots
    }

    /// Reads the value at `node`: in full where a pointer ends; an object or array where pointers go on
    /// below; otherwise only checked.
    private mutating func capture(at node: Int, in tree: PointerTree, into slots: inout [JSONValue?], depth: Int) throws(Failure) {
        guard tree.nodes[node].targets.isEmpty else {
            tree.assign(try value(depth: depth), at: node, into: &slots)
            return
        }
        switch try valueStart(depth: depth) {
        case UInt8(ascii: "{"):
            try forEachMember { parser throws(Failure) in try parser.child(of: node, in: tree) } value: { parser, child throws(Failure) in
                guard let child else { return try parser.skipValue(depth: depth + 1) }
                tree.clear(child, in: &slots)
                try parser.capture(at: child, in: tree, into: &slots, depth: depth + 1)
            }
        case UInt8(ascii: "["):
            let children = tree.nodes[node].children
            try forEachItem { parser, position throws(Failure) in
                let named = children.filter { tree.nodes[$0].arrayIndex == position }
                guard !named.isEmpty else { return try parser.skipValue(depth: depth + 1) }
                let item = try parser.value(depth: depth + 1)
                for child in named { tree.assign(item, at: child, into: &slots) }
            }
        default:
            try skipValue(depth: depth)
        }
    }

    /// Reads a key from its opening quote: the child of `node` it leads to, if any. A key without escapes
    /// in ASCII is compared as bytes; any other is read as a string and compared as a dictionary would.
    private mutating func child(of node: Int, in tree: PointerTree) throws(Failure) -> Int? {
        let quote = index
        index += 1
        let start = index
        try skipPlainText()
        if index < bytes.count, bytes[index] == UInt8(ascii: "\""), bytes[start..<index].allSatisfy({ $0 < 0x80 }) {
            index += 1
            return tree.child(of: node, asciiKey: bytes[start..<(index - 1)])
        }
        index = quote
        return tree.child(of: node, key: try string())
    }

    /// Checks a value without building it.
    mutating func skipValue(depth: Int) throws(Failure) {
        switch try valueStart(depth: depth) {
        case UInt8(ascii: "{"):
            try forEachMember { parser throws(Failure) in try parser.skipString() } value: { parser, _ throws(Failure) in
                try parser.skipValue(depth: depth + 1)
            }
        case UInt8(ascii: "["):
            try forEachItem { parser, _ throws(Failure) in try parser.skipValue(depth: depth + 1) }
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: try skipNumber()
        }
    }
}
