import Foundation
import HeraldPluginAPI
import Testing

@Suite("Identifiers")
struct IdentifierTests {
    @Test("identifiers are equal, and hash alike, exactly when their raw strings are equal")
    func equalityFollowsTheRawString() throws {
        // Swift compares strings by canonical equivalence: a precomposed é equals e + combining accent.
        let pairs: [(String, String, equal: Bool)] = [
            ("u1", "u1", true), ("u1", "u2", false), ("u1", "u10", false), ("", "", true),
            ("caf\u{E9}", "cafe\u{301}", true), ("café", "cafe", false),
            (String(repeating: "long-identifier-", count: 8), String(repeating: "long-identifier-", count: 8), true),
        ]
        for (left, right, equal) in pairs {
            #expect((UserID(left) == UserID(right)) == equal, "\(left) vs \(right)")
            #expect((left == right) == equal, "the raw strings themselves: \(left) vs \(right)")
            if equal { #expect(UserID(left).hashValue == UserID(right).hashValue) }
        }
    }

    @Test("an identifier decoded from JSON finds the entry keyed by one built in code")
    func decodedIdentifiersFindTheirEntries() throws {
        let decoded = try JSONDecoder().decode([ChatID].self, from: Data(#"["c1","caf\u00e9","c2"]"#.utf8))
        let counts: [ChatID: Int] = [ChatID("c1"): 1, ChatID("cafe\u{301}"): 2, ChatID("c2"): 3]
        #expect(decoded.map { counts[$0] } == [1, 2, 3])
        #expect(Set(decoded + [ChatID("c1"), ChatID("c3")]).count == 4)
    }
}
