import Foundation
@testable import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Testing

/// Purging the dead-letter queue by condition, oldest first, with the count of open letters kept right.
@Suite("Dead letters purged by condition, SQLite and PostgreSQL")
struct DeadLetterPurgeTests {
    @Test(arguments: StoreBackend.allCases) func eachConditionTakesOnlyItsLettersOldestFirst(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        let store = harness.store
        try await offCooperativePool {
            // a1 and b1 early, a2 and b2 a day later; b2 gets replayed.
            func letter(_ adapter: String, _ origin: String, at milliseconds: Int64) -> SourceRecord {
                SourceRecord(provenance: Provenance(adapter: adapter, origin: origin, rawSize: 4, receivedAt: Timestamp(milliseconds: milliseconds)),
                             outcome: .rejected(Rejection(.malformedJSON, "not JSON")), raw: Array("nope".utf8))
            }
            let day: Int64 = 86_400_000
            _ = try harness.router.commit([letter("a", "a1", at: 1_000), letter("b", "b1", at: 2_000),
                                           letter("a", "a2", at: 1_000 + day), letter("b", "b2", at: 2_000 + day)])
            let b2 = try #require(try store.deadLetters(limit: 10, includeReplayed: true).first { $0.provenance.origin == "b2" })
            try store.markReplayed(deadLetter: b2.id, at: Timestamp(milliseconds: 3 * day))
            #expect(try store.openDeadLetterCount() == 3)

            func origins() throws -> [String] { try store.deadLetters(limit: 10, includeReplayed: true).map(\.provenance.origin) }
            #expect(try store.deadLetterCount(DeadLetterSelection()) == 4)
            #expect(try store.deadLetterCount(DeadLetterSelection(receivedBefore: Timestamp(milliseconds: day))) == 2)
            #expect(try store.deadLetterCount(DeadLetterSelection(replayedOnly: true, adapter: "a")) == 0)
            #expect(try store.purgeDeadLetters(DeadLetterSelection(replayedOnly: true), limit: 100) == 1)
            #expect(try origins() == ["a1", "b1", "a2"])
            #expect(try store.openDeadLetterCount() == 3, "a replayed letter was not open")

            let early = DeadLetterSelection(receivedBefore: Timestamp(milliseconds: day), adapter: "a")
            #expect(try store.deadLetterCount(early) == 1)
            #expect(try store.purgeDeadLetters(early, limit: 100) == 1)
            #expect(try origins() == ["b1", "a2"])
            #expect(try store.purgeDeadLetters(DeadLetterSelection(adapter: "nobody"), limit: 100) == 0)

            #expect(try store.purgeDeadLetters(DeadLetterSelection(), limit: 1) == 1, "the oldest first, at most the limit")
            #expect(try origins() == ["a2"])
            #expect(try store.openDeadLetterCount() == 1)
            #expect(try store.statistics().deadLetters == 1)
        }
        if backend == .sqlite {
            #expect(try harness.sqlite.statistics() == harness.sqlite.recountStatistics(), "the kept count equals a count of the rows")
        }
    }
}
