import HeraldPluginAPI

/// Rows of values as one JSON array of arrays: a single statement parameter that SQLite's
/// `json_each` turns back into rows, so a set of keys of any size is looked up or written by one
/// statement (as PostgreSQL does with arrays and `unnest`).
struct SQLJSONRows {
    private var bytes: [UInt8] = [UInt8(ascii: "[")]
    private var inRow = false
    private var rowHasValue = false
    /// Rows appended.
    private(set) var count = 0

    /// Starts a row.
    mutating func startRow() {
        if inRow { endRow() }
        if count > 0 { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "["))
        inRow = true
        rowHasValue = false
        count += 1
    }

    /// Appends a text value to the current row.
    mutating func add(_ text: String) {
        separate()
        OutputWireFormat.appendJSONString(text, to: &bytes)
    }

    /// Appends an integer value to the current row.
    mutating func add(_ integer: Int64) {
        separate()
        OutputWireFormat.appendJSONInteger(integer, to: &bytes)
    }

    /// Appends `NULL` to the current row.
    mutating func addNull() {
        separate()
        bytes.append(contentsOf: [UInt8(ascii: "n"), UInt8(ascii: "u"), UInt8(ascii: "l"), UInt8(ascii: "l")])
    }

    /// The JSON text.
    mutating func text() -> String {
        if inRow { endRow() }
        return String(decoding: bytes + [UInt8(ascii: "]")], as: UTF8.self)
    }

    private mutating func separate() {
        if rowHasValue { bytes.append(UInt8(ascii: ",")) }
        rowHasValue = true
    }

    private mutating func endRow() {
        bytes.append(UInt8(ascii: "]"))
        inRow = false
    }
}

extension SQLJSONRows {
    /// Appends a message key as two values (send time, id), with the lowest or highest bound for `nil`.
    mutating func add(_ key: MessageKey?, high: Bool) {
        if let key {
            add(key.sentAt.milliseconds)
            add(key.id.rawValue)
        } else {
            add(high ? Int64.max : Int64.min)
            add(high ? "\u{10FFFF}" : "")
        }
    }
}
