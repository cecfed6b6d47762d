import Foundation
@testable import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Testing

/// Identifiers spelled with different bytes are different chats and users to the router, as they are to
/// the stores and the broker, even where `String` takes them as equal (canonical equivalence): no message
/// is taken for a duplicate of another chat's, and every counter stays equal to a recount.
@Suite("Identifiers spelled differently, SQLite and PostgreSQL")
struct IdentifierSpellingTests {
    static let precomposed = ChatID("caf\u{E9}")
    static let decomposed = ChatID("cafe\u{301}")

    @Test(arguments: StoreBackend.allCases, [true, false])
    func chatsSpelledDifferentlyKeepTheirOwnMessagesAndCounters(_ backend: StoreBackend, oneCommit: Bool) async throws {
        let harness = try await RouterHarness(backend)
        try await offCooperativePool {
            let first = message(Self.precomposed, "m1", from: "alice", to: ["bob"], at: 1000)
            let second = message(Self.decomposed, "m1", from: "alice", to: ["bob"], at: 2000)
            let reports = oneCommit ? [try harness.apply(first, second)] : [try harness.apply(first), try harness.apply(second)]
            #expect(reports.map(\.applied).reduce(0, +) == 2)
            #expect(reports.map(\.duplicates).reduce(0, +) == 0)
            #expect(try harness.badge("bob") == BadgeUpdate(recipient: "bob", unread: 2,
                                                            chats: [Self.precomposed: 1, Self.decomposed: 1]))
            let badges = try harness.store.pendingOutputs(sink: "sink", after: 0, limit: 100).filter { $0.kind == .badge }
            let last = try #require(badges.last)
            #expect(String(decoding: last.payload, as: UTF8.self) == #"{"chats":{"caf\#u{E9}":1,"cafe\#u{301}":1},"unread":2}"#)
        }
        #expect(try harness.store.unreadAgainstRecount().allSatisfy { $0.stored == $0.recounted })
    }

    @Test(arguments: StoreBackend.allCases)
    func aReaderSpelledDifferentlyMovesOnlyTheirOwnPosition(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        let precomposed = UserID("r\u{E9}my"), decomposed = UserID("re\u{301}my")
        try await offCooperativePool {
            try harness.apply(message("c1", "m1", from: "alice", to: [precomposed, decomposed], at: 1000),
                              read(precomposed, "c1", upTo: "m1"))
            #expect(try harness.badge(precomposed).unread == 0)
            #expect(try harness.badge(decomposed) == BadgeUpdate(recipient: decomposed, unread: 1, chats: ["c1": 1]))
            let receipts = try harness.drain().compactMap(\.receipt)
            #expect(receipts.map(\.reader) == [precomposed])
        }
        #expect(try harness.store.unreadAgainstRecount().allSatisfy { $0.stored == $0.recounted })
    }
}
