import Foundation
import HeraldPluginAPI
import HeraldTestKit
import Testing

@Suite("Identifiers")
struct IdentifierTests {
    /// Spellings that `String` takes as equal (canonical equivalence) and the stores and the broker keep apart.
    static let equivalentSpellings: [(String, String)] = [
        ("caf\u{E9}", "cafe\u{301}"),       // precomposed é, and e + combining acute accent
        ("\u{212A}", "K"),                   // KELVIN SIGN, whose canonical form is the letter K
        ("\u{1E69}", "s\u{323}\u{307}"),    // ṩ, and s + dot below + dot above
    ]

    @Test("identifiers are equal, and hash alike, exactly when their UTF-8 bytes are")
    func equalityFollowsTheBytes() throws {
        let pairs: [(String, String, equal: Bool)] = [
            ("u1", "u1", true), ("u1", "u2", false), ("u1", "u10", false), ("", "", true), ("café", "cafe", false),
            (String(repeating: "long-identifier-", count: 8), String(repeating: "long-identifier-", count: 8), true),
        ] + Self.equivalentSpellings.map { ($0.0, $0.1, false) }
        for (left, right, equal) in pairs {
            #expect((UserID(left) == UserID(right)) == equal, "\(left) vs \(right)")
            #expect(Array(left.utf8) == Array(right.utf8) || !equal)
            if equal { #expect(UserID(left).hashValue == UserID(right).hashValue) }
            #expect(Set([ChatID(left), ChatID(right)]).count == (equal ? 1 : 2))
        }
        for (left, right) in Self.equivalentSpellings {
            #expect(left == right, "the strings themselves are equal: \(left) vs \(right)")
        }
    }

    @Test("identifiers sort by their UTF-8 bytes, as ORDER BY does in both stores", arguments: [1, 2, 3] as [UInt64])
    func orderFollowsTheBytes(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let alphabet: [String] = ["a", "b", "K", "\u{212A}", "e", "\u{E9}", "\u{301}", "\u{FFFD}", "\u{1F600}", "-", "0"]
        var identifiers = Self.equivalentSpellings.flatMap { [UserID($0.0), UserID($0.1)] }
        for _ in 0..<100 {
            identifiers.append(UserID((0..<Int.random(in: 0...4, using: &random)).map { _ in alphabet.randomElement(using: &random) ?? "" }.joined()))
        }
        let sorted = identifiers.sorted()
        #expect(sorted.map { Array($0.rawValue.utf8) } == identifiers.map { Array($0.rawValue.utf8) }.sorted { $0.lexicographicallyPrecedes($1) })
        for left in identifiers.prefix(60) {
            for right in identifiers.prefix(60) {
                let relations = [left < right, left == right, right < left].filter { $0 }.count
                #expect(relations == 1, "exactly one of <, ==, > holds for \(left) and \(right)")
                // The three-way comparison that sorts by several keys answers as `<` and `==` do.
                let order = left.byteOrder(comparedTo: right)
                #expect((order < 0, order == 0, order > 0) == (left < right, left == right, right < left), "\(left) vs \(right)")
            }
        }
    }

    @Test("an identifier decoded from JSON finds the entry keyed by the same bytes, and only that one")
    func decodedIdentifiersFindTheirEntries() throws {
        let decoded = try JSONDecoder().decode([ChatID].self, from: Data(#"["c1","caf\u00e9","cafe\u0301","c2"]"#.utf8))
        let counts: [ChatID: Int] = [ChatID("c1"): 1, ChatID("caf\u{E9}"): 2, ChatID("cafe\u{301}"): 3, ChatID("c2"): 4]
        #expect(decoded.map { counts[$0] } == [1, 2, 3, 4])
        #expect(Set(decoded + [ChatID("c1"), ChatID("c3")]).count == 5)
    }

    @Test("a dictionary keyed by identifiers codes as a JSON object")
    func identifierKeyedDictionariesCodeAsObjects() throws {
        let counts: [ChatID: Int] = ["c1": 1, "c2": 2]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = try encoder.encode(counts)
        #expect(String(decoding: data, as: UTF8.self) == #"{"c1":1,"c2":2}"#)
        #expect(try JSONDecoder().decode([ChatID: Int].self, from: data) == counts)
    }
}
