@testable import HeraldCore
import HeraldPluginAPI
import PropertyBased
import HeraldTestKit
import Testing

/// Applying events in batches of any size gives the same state and outputs as applying them one at a
/// time: the set-based slice (loaded once per batch) holds everything a batch reads, and the
/// in-memory apply sees the batch's own earlier changes. A commit queues one badge per user and one
/// read receipt per reader, sender and chat, the latest; every other output is the same, in the same order.
@Suite("Batch equivalence (property-based)")
struct BatchEquivalenceTests {
    /// Applies `events` in commits of the given sizes; returns the store snapshot, each commit's event
    /// range and outputs except badges in order, and the last badge output each user got.
    static func run(_ events: [ChatEvent], sizes: [Int], on backend: StoreBackend) async throws
        -> (snapshot: [String], commits: [(events: Range<Int>, outputs: [Output])], badges: [UserID: BadgeUpdate], harness: RouterHarness) {
        let harness = try await RouterHarness(backend)
        let (snapshot, commits, badges) = try await offCooperativePool {
            var commits: [(events: Range<Int>, outputs: [Output])] = []
            var badges: [UserID: BadgeUpdate] = [:]
            var start = 0
            var size = sizes.makeIterator()
            while start < events.count {
                let end = min(events.count, start + max(1, size.next() ?? 1))
                _ = try harness.router.commit(events[start..<end].map(harness.record))
                var outputs: [Output] = []
                for output in try harness.drain() {
                    if let badge = output.badgeUpdate { badges[badge.recipient] = badge } else { outputs.append(output) }
                }
                commits.append((start..<end, outputs))
                start = end
            }
            return (try harness.store.modelSnapshot(), commits, badges)
        }
        return (snapshot, commits, badges, harness)
    }

    /// What one commit of the events whose one-at-a-time outputs are `outputs` queues: the same, less
    /// each read receipt that a later one from the same reader to the same sender in the same chat follows.
    static func latestReceiptsOnly(_ outputs: [Output]) -> [Output] {
        outputs.enumerated().filter { index, output in
            guard case .readReceipt(let receipt) = output else { return true }
            return !outputs[(index + 1)...].contains { later in
                guard case .readReceipt(let next) = later else { return false }
                return next.recipient == receipt.recipient && next.chat == receipt.chat && next.reader == receipt.reader
            }
        }.map(\.1)
    }

    /// Checks that each commit of `batched` queued what its events queued one at a time in `single`,
    /// with only the latest receipt of each reader to each sender in each chat.
    static func expectSameOutputs(_ single: [(events: Range<Int>, outputs: [Output])],
                                  _ batched: [(events: Range<Int>, outputs: [Output])]) {
        for commit in batched {
            let oneAtATime = single[commit.events].flatMap(\.outputs)
            #expect(commit.outputs == latestReceiptsOnly(oneAtATime), "the commit of events \(commit.events)")
        }
    }

    @Test(arguments: StoreBackend.allCases) func batchesOfAnySizeMatchOneAtATime(_ backend: StoreBackend) async throws {
        await propertyCheck(count: backend.propertyRuns, input: Gen.int(in: 0...100_000).array(of: 1...60), Gen.int(in: 1...25).array(of: 1...20)) { codes, sizes in
            do {
                let events = codes.map(OrderIndependenceTests.event)
                let single = try await Self.run(events, sizes: [1], on: backend)
                let batched = try await Self.run(events, sizes: sizes, on: backend)
                #expect(single.snapshot == batched.snapshot)
                Self.expectSameOutputs(single.commits, batched.commits)
                #expect(single.badges == batched.badges)
                for (user, badge) in batched.badges {
                    #expect(badge == (try batched.harness.badge(user)), "last badge output of \(user)")
                }
                for row in try batched.harness.store.unreadAgainstRecount() {
                    #expect(row.stored == row.recounted, "unread of \(row.user) in \(row.chat)")
                }
            } catch {
                Issue.record(error)
            }
        }
    }

    /// A batch with hundreds of new messages is applied while the store takes its messages ahead
    /// (``MessagesAhead``: on SQLite on another thread); redelivered messages among them are skipped.
    @Test(arguments: StoreBackend.allCases) func aBatchAppliedWhileItsMessagesAreWrittenMatchesOneAtATime(_ backend: StoreBackend) async throws {
        let fresh = ConcurrentWritersTests.events(count: 700, seed: 7)
        let events = fresh + fresh.prefix(60)
        #expect(events.count { if case .messageReceived = $0 { true } else { false } } > EventRouter.concurrentApplyMessages)
        let single = try await Self.run(events, sizes: [1], on: backend)
        let batched = try await Self.run(events, sizes: [events.count], on: backend)
        #expect(single.snapshot == batched.snapshot)
        Self.expectSameOutputs(single.commits, batched.commits)
        #expect(single.badges == batched.badges)
        for row in try batched.harness.store.unreadAgainstRecount() {
            #expect(row.stored == row.recounted, "unread of \(row.user) in \(row.chat)")
        }
    }

    @Test(arguments: StoreBackend.allCases) func oneBatchWithEveryKindOfEventMatchesOneAtATime(_ backend: StoreBackend) async throws {
        // A fixed sequence that exercises reads before their message, a late chat.created and a reply
        // inside one batch.
        let events: [ChatEvent] = [
            read("bob", "c1", upTo: "m2"),
            message("c1", "m1", from: "alice", to: ["bob"], at: 1000),
            message("c1", "m2", from: "alice", to: ["bob"], at: 2000),
            message("c1", "m3", from: "bob", to: ["alice"], at: 3000),
            .chatCreated(ChatCreated(chat: "c1", members: ["alice", "bob", "carol"])),
            message("c1", "m4", from: "carol", at: 4000),
            message("c1", "m1", from: "alice", to: ["bob"], at: 1000),
        ]
        let single = try await Self.run(events, sizes: [1], on: backend)
        let batched = try await Self.run(events, sizes: [events.count], on: backend)
        #expect(single.snapshot == batched.snapshot)
        Self.expectSameOutputs(single.commits, batched.commits)
        #expect(single.badges == batched.badges)
        // alice has not read bob's m3 nor carol's m4; carol's own m4 covers everything before it.
        #expect(try batched.harness.badge("alice") == BadgeUpdate(recipient: "alice", unread: 2, chats: ["c1": 2]))
        #expect(try batched.harness.badge("carol") == BadgeUpdate(recipient: "carol", unread: 0, chats: [:]))
    }
}
