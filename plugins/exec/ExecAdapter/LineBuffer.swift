/// Splits a byte stream into lines, bounding each line's length. Package-visible: the fuzzing harness
/// feeds it arbitrary bytes.
package struct LineBuffer {
    package let maximumLineBytes: Int
    private var pending: [UInt8] = []
    private var discarding = false

    package init(maximumLineBytes: Int) { self.maximumLineBytes = maximumLineBytes }

    /// A complete line, or an overlong one (reported once, then skipped to its end).
    package enum Line {
        case complete([UInt8])
        case overlong(Int)
    }

    package mutating func append(_ bytes: ArraySlice<UInt8>) -> [Line] {
        var lines: [Line] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if discarding {
                    discarding = false
                } else {
                    lines.append(.complete(pending))
                }
                pending.removeAll(keepingCapacity: true)
            } else if !discarding {
                pending.append(byte)
                if pending.count > maximumLineBytes {
                    lines.append(.overlong(pending.count))
                    pending.removeAll(keepingCapacity: true)
                    discarding = true
                }
            }
        }
        return lines
    }
}
