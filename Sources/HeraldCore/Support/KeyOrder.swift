import HeraldPluginAPI

/// Sorts by several keys, each compared once: a key's comparison is three-way (negative, zero or positive,
/// as ``Identifier/byteOrder(comparedTo:)`` answers), and the first that is not zero decides. A tuple's `<`
/// asks `==` and then `<` of every key but the last, reading the same bytes twice.
enum KeyOrder {
    /// Whether the left side sorts first by `first`, then by `second`.
    @inline(__always)
    static func ascending(_ first: Int, _ second: @autoclosure () -> Int) -> Bool {
        first != 0 ? first < 0 : second() < 0
    }

    /// Whether the left side sorts first by `first`, then by `second`, then by `third`.
    @inline(__always)
    static func ascending(_ first: Int, _ second: @autoclosure () -> Int, _ third: @autoclosure () -> Int) -> Bool {
        if first != 0 { return first < 0 }
        let next = second()
        return next != 0 ? next < 0 : third() < 0
    }

    /// How two times compare: negative, zero or positive as `lhs` is earlier, the same or later.
    @inline(__always)
    static func order(_ lhs: Timestamp, _ rhs: Timestamp) -> Int {
        lhs.milliseconds < rhs.milliseconds ? -1 : lhs.milliseconds == rhs.milliseconds ? 0 : 1
    }
}
