import Foundation
import GRDB
@testable import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Testing

/// Both stores keep a commit's outputs for a sink in packs of up to 256 (`outbox_packs`); a sink still
/// sees them an output at a time: read from any sequence, confirmed, retried and dead-lettered one by one.
@Suite("Outbox packs, SQLite and PostgreSQL")
struct OutboxPackTests {
    /// 300 messages in one commit queue more outputs than a pack holds; they are read across the packs'
    /// boundary from any place, purged in part (twice, counted once), retried and dead-lettered by output.
    @Test(arguments: StoreBackend.allCases) func aSinkSeesPackedOutputsOneByOne(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        try await harness.commitMessages(300, overChats: 7)
        let store = harness.store
        let all = try await offCooperativePool { try store.pendingOutputs(sink: "sink", after: 0, limit: 10_000) }
        #expect(all.count > OutboxPack.maximumOutputs)
        #expect(Set(all.map { OutboxPack.place(of: $0.sequence).pack }).count > 1, "the commit's outputs fill more than one pack")
        #expect(all.map(\.sequence) == all.map(\.sequence).sorted())
        let queued = try await offCooperativePool { try store.statistics().outbox }
        #expect(queued == all.count)

        // From any sequence, across the packs' boundary.
        for start in [0, 100, OutboxPack.maximumOutputs - 5, OutboxPack.maximumOutputs - 1] {
            let read = try await offCooperativePool { try store.pendingOutputs(sink: "sink", after: all[start].sequence, limit: 20) }
            #expect(read.map(\.sequence) == all[(start + 1)...].prefix(20).map(\.sequence), "after output \(start)")
            #expect(read.map(\.payload) == all[(start + 1)...].prefix(20).map(\.payload))
        }

        // Part of a pack confirmed: the rest is read from the start, and a second purge of the same outputs changes nothing.
        let confirmed = all.prefix(100).map(\.sequence)
        try await offCooperativePool { try store.removeOutputs(sink: "sink", delivered: confirmed) }
        try await offCooperativePool { try store.removeOutputs(sink: "sink", delivered: confirmed) }
        var pending = try await offCooperativePool { try store.pendingOutputs(sink: "sink", after: 0, limit: 10_000) }
        #expect(pending.map(\.sequence) == all.dropFirst(100).map(\.sequence))
        #expect(try await offCooperativePool { try store.statistics().outbox } == all.count - 100)

        // A failed delivery counts for the first undelivered output only.
        let first = pending[0].sequence
        try await offCooperativePool { try store.recordFailedAttempt(sink: "sink", sequences: [first]) }
        pending = try await offCooperativePool { try store.pendingOutputs(sink: "sink", after: 0, limit: 3) }
        #expect(pending.map(\.attempts) == [1, 0, 0])

        // Dead-lettering it lets the next one go first, with no attempts of its own.
        let head = pending[0]
        let now = harness.clock.now()
        try await offCooperativePool {
            try store.deadLetterOutput(head, sink: "sink", rejection: Rejection(.undeliverable, "refused"), at: now)
        }
        pending = try await offCooperativePool { try store.pendingOutputs(sink: "sink", after: 0, limit: 10_000) }
        #expect(pending.map(\.sequence) == all.dropFirst(101).map(\.sequence))
        #expect(pending.first?.attempts == 0)
        #expect(try await offCooperativePool { try store.statistics().outbox } == all.count - 101)
        let letters = try await offCooperativePool { try store.deadLetters(limit: 10, includeReplayed: false) }
        #expect(letters.map(\.raw) == [head.payload])

        // Confirmed to the end of a pack in the middle and beyond: what is left is the rest, and then nothing.
        let throughBoundary = pending.prefix(OutboxPack.maximumOutputs).map(\.sequence)
        try await offCooperativePool { try store.removeOutputs(sink: "sink", delivered: throughBoundary) }
        let rest = try await offCooperativePool { try store.pendingOutputs(sink: "sink", after: 0, limit: 10_000) }
        #expect(rest.map(\.sequence) == pending.dropFirst(OutboxPack.maximumOutputs).map(\.sequence))
        try await offCooperativePool { try store.removeOutputs(sink: "sink", delivered: rest.map(\.sequence)) }
        #expect(try await offCooperativePool { try store.pendingOutputs(sink: "sink", after: 0, limit: 10).isEmpty })
        #expect(try await offCooperativePool { try store.statistics().outbox } == 0)
    }

    /// A SQLite store from before the packs keeps its undelivered outputs, in order, with their attempts.
    @Test func aSQLiteStoreFromBeforeThePacksKeepsItsOutputs() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("old.sqlite")
        let old = try DatabaseQueue(path: path)
        try SQLiteChatStore.migrator.migrate(old, upTo: "v4-messages-in-arrival-order")
        try old.write { db in
            for (sink, recipient, payload, attempts) in [("push", "bob", "{\"n\":1}", 2), ("hooks", "carol", "{\"n\":2}", 0),
                                                          ("push", "dave", "{\"n\":3}", 0)] {
                try db.execute(sql: "INSERT INTO outbox(sink, recipient, kind, payload, created_at, attempts) VALUES (?, ?, 'badge', ?, 7, ?)",
                               arguments: [sink, recipient, Data(payload.utf8), attempts])
                try db.execute(sql: """
                    INSERT INTO store_counters(name, value) VALUES ('outbox:' || ?, 1) ON CONFLICT(name) DO UPDATE SET value = value + 1
                    """, arguments: [sink])
            }
        }
        try old.close()

        var announced: [String] = []
        let store = try SQLiteChatStore(path: path, durability: .normal) { announced = $0 }
        #expect(announced == ["v5-outbox-packs"])
        let push = try store.pendingOutputs(sink: "push", after: 0, limit: 10)
        #expect(push.map(\.recipient) == ["bob", "dave"])
        #expect(push.map { String(decoding: $0.payload, as: UTF8.self) } == ["{\"n\":1}", "{\"n\":3}"])
        #expect(push.map(\.attempts) == [2, 0])
        #expect(push.allSatisfy { $0.kind == .badge && $0.createdAt == Timestamp(milliseconds: 7) })
        #expect(try store.pendingOutputs(sink: "hooks", after: 0, limit: 10).map(\.recipient) == ["carol"])
        #expect(try store.statistics() == (try store.recountStatistics()))
        #expect(try store.outboxDepth() == ["push": 2, "hooks": 1])
        #expect(try !store.pool.read { db in try db.tableExists("outbox") })
    }
}
