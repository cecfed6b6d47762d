import HeraldCore
import HeraldTestKit
import Testing

/// A SQLite outbox commits in sequence order, so a dispatcher reads on from where it was: while another
/// sink is down and its entries pile up, this sink's reads and purges pass over them once, not on every
/// read. (PostgreSQL keys the outbox by sink instead; its plan is checked in the store's own suite.)
@Suite("Outbox dispatcher position")
struct OutboxPositionTests {
    @Test func withOneWriterADispatcherReadsOnAndLeavesTheOtherSinksEntries() async throws {
        let outbox = try OutboxFixture(sinks: ["down", "push"], batchSize: 4)
        let store = outbox.store, sink = outbox.sink
        let running = Task { try await outbox.dispatcher.run() }
        defer { running.cancel() }

        try await outbox.send(1...10)
        try await eventually("the first ten notifications to be delivered") { sink.delivered.count == 10 }
        try await eventually("the dispatcher to run dry and purge") { try store.outboxDepth()["push"] == nil }
        let firstRound = sink.delivered
        let lastDelivered = try #require(firstRound.last)
        try await outbox.send(11...20)
        try await eventually("the next ten to be delivered") { sink.delivered.count == 20 }
        try await eventually("the dispatcher to purge them") { try store.outboxDepth()["push"] == nil }

        // The reads never go back: none starts from the beginning again once entries were delivered.
        let reads = store.reads(sink: "push")
        #expect(zip(reads, reads.dropFirst()).allSatisfy { $0 <= $1 }, "reads after: \(reads)")
        #expect(reads.contains { $0 >= lastDelivered }, "reads after: \(reads)")
        // The purges removed this sink's entries only.
        #expect(try store.outboxDepth() == ["down": 20])
    }
}
