import HeraldCore
import HeraldTestKit
import Testing

/// Delivered entries leave the outbox in purges, each a write with its own fsync. A purge waits until the
/// oldest delivered entry is `purgeInterval` old, so a steady trickle of outputs, which lets the dispatcher
/// catch up between commits, does not cost a purge per commit; an outbox that goes quiet is still emptied.
@Suite("Outbox purges")
struct OutboxPurgeTests {
    @Test func catchingUpBetweenCommitsDoesNotPurgeEachTime() async throws {
        let outbox = try OutboxFixture(purgeInterval: .seconds(3600))
        let running = Task { try await outbox.dispatcher.run() }
        defer { running.cancel() }
        for round in 1...10 {
            try await outbox.send(round...round)
            try await eventually("notification \(round) to be delivered") { outbox.sink.delivered.count == round }
        }
        #expect(outbox.store.purges == 0, "each pause purged: \(outbox.store.purges) purges for 10 commits")
        #expect(try outbox.store.outboxDepth() == ["push": 10])
    }

    @Test func aQuietOutboxIsEmptiedOnceItsEntriesAreOldEnough() async throws {
        let outbox = try OutboxFixture(purgeInterval: .milliseconds(50))
        let running = Task { try await outbox.dispatcher.run() }
        defer { running.cancel() }
        try await outbox.send(1...5)
        try await eventually("five notifications to be delivered") { outbox.sink.delivered.count == 5 }
        try await eventually("the delivered entries to be purged") { try outbox.store.outboxDepth().isEmpty }
        #expect(outbox.store.purges >= 1)
        #expect(outbox.sink.delivered.count == 5, "nothing delivered twice")
    }
}
