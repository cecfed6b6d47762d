@testable import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Testing

@Suite("Sorts by several keys")
struct KeyOrderTests {
    /// Short names that share prefixes, an empty one, and spellings `String` takes as equal but the bytes keep apart.
    static let names = ["a", "b", "ab", "ba", "", "K", "\u{212A}", "e\u{301}", "\u{E9}", "\u{1F600}"]

    @Test("sorting by keys each compared once in one pass gives the order of a tuple's <", arguments: [1, 2, 3] as [UInt64])
    func sortsAsTuplesDo(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        func name() -> String { Self.names.randomElement(using: &random) ?? "" }
        let rows = (0..<300).map { _ in
            (chat: ChatID(name()), at: Timestamp(milliseconds: Int64.random(in: 0...3, using: &random)), user: UserID(name()))
        }
        func keys(_ sorted: [(chat: ChatID, at: Timestamp, user: UserID)]) -> [[String]] {
            sorted.map { [$0.chat.rawValue, "\($0.at.milliseconds)", $0.user.rawValue] }
        }

        let byTwo = rows.sorted { KeyOrder.ascending($0.chat.byteOrder(comparedTo: $1.chat), $0.user.byteOrder(comparedTo: $1.user)) }
        let byTwoAsTuples = rows.sorted { ($0.chat, $0.user) < ($1.chat, $1.user) }
        #expect(byTwo.map { [$0.chat.rawValue, $0.user.rawValue] } == byTwoAsTuples.map { [$0.chat.rawValue, $0.user.rawValue] })

        let byThree = rows.sorted {
            KeyOrder.ascending($0.chat.byteOrder(comparedTo: $1.chat), KeyOrder.order($0.at, $1.at), $0.user.byteOrder(comparedTo: $1.user))
        }
        let byThreeAsTuples = rows.sorted { ($0.chat, $0.at, $0.user) < ($1.chat, $1.at, $1.user) }
        #expect(keys(byThree) == keys(byThreeAsTuples))
    }
}
