import HeraldCore
import HeraldTestKit
import Testing

/// Each outbox read is a query on the store (a round trip to PostgreSQL). A read that returns fewer
/// entries than it asked for saw everything committed so far, and every later commit wakes the
/// dispatcher, so a dispatcher that keeps up reads once per commit rather than once more to find nothing.
@Suite("Outbox reads")
struct OutboxReadTests {
    @Test func aDispatcherThatKeepsUpReadsOncePerCommit() async throws {
        let outbox = try OutboxFixture(purgeInterval: .seconds(3600))
        // Committed before the dispatcher starts, so its first read finds it and no idle poll comes between.
        try await outbox.send(1...1)
        let running = Task { try await outbox.dispatcher.run() }
        defer { running.cancel() }
        try await eventually("notification 1 to be delivered") { outbox.sink.delivered.count == 1 }
        for round in 2...10 {
            try await outbox.send(round...round)
            try await eventually("notification \(round) to be delivered") { outbox.sink.delivered.count == round }
        }
        // One read per commit, and one the first commit's wake-up causes after the dispatcher read it.
        let reads = outbox.store.reads(sink: "push")
        #expect(reads.count <= 11, "\(reads.count) reads for 10 commits")
        // Each commit's one output is the first of a pack of its own.
        #expect(outbox.sink.delivered == (1...10).map { OutboxPack.sequence(pack: Int64($0), position: 0) })
    }
}
