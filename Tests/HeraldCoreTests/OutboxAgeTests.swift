import HeraldCore
import HeraldModel
import HeraldPluginAPI
import HeraldTestKit
import Testing

/// `herald_outbox_oldest_age_seconds` comes from the entry queued first, on both stores.
@Suite("Oldest undelivered output")
struct OutboxAgeTests {
    @Test(arguments: StoreBackend.allCases) func theAgeIsTheFirstQueuedEntrysUntilItIsDelivered(_ backend: StoreBackend) async throws {
        let harness = try await RouterHarness(backend)
        let store = try #require(harness.store as? any GatewayStore)
        try await offCooperativePool {
            #expect(try store.oldestOutputAge(now: harness.clock.now()) == nil)
            try harness.apply(message("c1", "m1", from: "alice", to: ["bob"]))
            let first = try store.pendingOutputs(sink: "sink", after: 0, limit: 100)
            harness.clock.advance(milliseconds: 4_000)
            try harness.apply(message("c2", "m2", from: "carol", to: ["dave"]))
            harness.clock.advance(milliseconds: 1_000)
            #expect(try store.oldestOutputAge(now: harness.clock.now()) == 5_000)
            // The first commit's outputs delivered: the second commit's are the oldest now.
            try store.removeOutputs(sink: "sink", delivered: first.map(\.sequence))
            #expect(try store.oldestOutputAge(now: harness.clock.now()) == 1_000)
            try harness.drain()
            #expect(try store.oldestOutputAge(now: harness.clock.now()) == nil)
        }
    }
}
