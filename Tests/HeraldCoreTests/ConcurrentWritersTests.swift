import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldPostgres
import HeraldTestKit
import Metrics
import Testing

/// Several instances on one PostgreSQL database: each has its own store connection and router, and
/// their batches touch the same chats at the same moment.
@Suite("PostgreSQL: several writers")
struct ConcurrentWritersTests {
    static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
    static let users: [UserID] = ["u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7"]

    /// A deterministic mix over 6 chats: messages from members, reads of messages that may not be stored
    /// yet, and late `chat.created`.
    static func events(count: Int, seed: UInt64) -> [ChatEvent] {
        var generator = SplitMix64(seed: seed)
        var sent: [ChatID: Int] = [:]
        return (0..<count).map { index in
            let chat = ChatID("c\(generator.next(6))")
            let member = users[(Int(chat.rawValue.dropFirst()) ?? 0 + generator.next(4)) % users.count]
            let roll = generator.next(100)
            if roll < 3 {
                return .chatCreated(ChatCreated(chat: chat, members: Array(users.shuffled(using: &generator).prefix(4))))
            }
            if roll < 30, let stored = sent[chat] {
                let reader = users[generator.next(users.count)]
                return .messagesRead(MessagesRead(reader: reader, chat: chat, upTo: MessageID("\(chat)-m\(generator.next(stored + 3))"),
                                                  readAt: Timestamp(milliseconds: 9_000_000)))
            }
            let number = sent[chat, default: 0]
            sent[chat] = number + 1
            let sender = generator.next(3) == 0 ? member : users[generator.next(users.count)]
            // Send times out of arrival order: a message may land before one a reader has already read.
            return .messageReceived(MessageReceived(chat: chat, id: MessageID("\(chat)-m\(number)"), sender: sender, recipients: nil,
                                                    body: "b\(index)", sentAt: Timestamp(milliseconds: 1_000 + Int64(generator.next(100_000)))))
        }
    }

    static func router(_ store: PostgresChatStore) -> EventRouter {
        EventRouter(store: store, policy: RouterPolicy(), routing: OutputRouting(sinkAccepts: [("sink", Set(OutputKind.allCases))]),
                    clock: ManualClock(), metrics: RouterMetrics(factory: NOOPMetricsHandler.instance), signal: OutboxSignal(), logger: logger)
    }

    static func record(_ event: ChatEvent) -> SourceRecord {
        SourceRecord(provenance: Provenance(adapter: "t", origin: "t", rawSize: 0, receivedAt: Timestamp(milliseconds: 1)),
                     outcome: .event(event), raw: [])
    }

    /// (message, recipient) of every notification in the outbox, with repeats.
    static func notifications(_ store: PostgresChatStore) throws -> [String] {
        try store.pendingOutputs(sink: "sink", after: 0, limit: 1_000_000).compactMap { envelope in
            guard case .notification(let notification) = try envelope.decodeOutput() else { return nil }
            return "\(notification.messageID)→\(notification.recipient)"
        }
    }

    @Test func twoInstancesOnTheSameChatsAtOnceEndAsOneInstanceWould() async throws {
        let cluster = try await PostgresCluster.shared()
        let events = withoutOrderDependentReads(Self.events(count: 3_000, seed: 7))
        // The broker gives each event to one instance or the other, and one in ten to both, as after a
        // redelivery: the store must still hold each message once and count it once.
        var split = SplitMix64(seed: 99)
        var shares: [[ChatEvent]] = [[], []]
        for event in events {
            let roll = split.next(10)
            if roll == 0 || roll % 2 == 1 { shares[0].append(event) }
            if roll == 0 || roll % 2 == 0 { shares[1].append(event) }
        }
        let parts = shares
        let referenceURL = try await cluster.createDatabase()
        let reference = try await offCooperativePool {
            let store = try PostgresChatStore(settings: PostgresStoreSettings(url: referenceURL), logger: Self.logger)
            let router = Self.router(store)
            for start in stride(from: 0, to: events.count, by: 40) {
                _ = try router.commit(events[start..<min(start + 40, events.count)].map(Self.record))
            }
            return (try store.modelSnapshot(), try Self.notifications(store))
        }
        let url = try await cluster.createDatabase()
        let stores = try await offCooperativePool {
            try (PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: Self.logger),
                 PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: Self.logger))
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (offset, store) in [stores.0, stores.1].enumerated() {
                group.addTask {
                    try await offCooperativePool {
                        let router = Self.router(store)
                        var generator = SplitMix64(seed: UInt64(offset + 100))
                        let events = parts[offset]
                        var start = 0
                        while start < events.count {
                            let end = min(events.count, start + 1 + generator.next(60))
                            _ = try router.commit(events[start..<end].map(Self.record))
                            start = end
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let store = stores.0
        #expect(try store.statistics().messages == reference.0.filter { $0.hasPrefix("m|") }.count)
        for row in try store.unreadAgainstRecount() where row.stored != row.recounted {
            Issue.record("unread of \(row.user) in \(row.chat): stored \(row.stored), recount \(row.recounted)")
        }
        #expect(try store.modelSnapshot() == reference.0, "the model differs from one instance's")
        // Which notifications are due depends on the order reads and messages meet (a read that arrives
        // first covers the message), so only their uniqueness is compared.
        let notified = try Self.notifications(store)
        #expect(!notified.isEmpty && !reference.1.isEmpty)
        #expect(notified.count == Set(notified).count, "a notification was produced twice for the same message and recipient")
    }

    @Test func aLeaseHasOneHolderUntilItExpiresOrIsReleased() async throws {
        let url = try await PostgresCluster.shared().createDatabase()
        let store = try await offCooperativePool {
            try PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: Self.logger)
        }
        try await offCooperativePool {
            #expect(try store.holdLease("outbox:push", holder: "a", ttl: .seconds(30)))
            #expect(try !store.holdLease("outbox:push", holder: "b", ttl: .seconds(30)), "b took a lease a holds")
            #expect(try store.holdLease("outbox:push", holder: "a", ttl: .seconds(30)), "a could not renew")
            #expect(try store.activeLeases().map(\.holder) == ["a"])
            try store.releaseLease("outbox:push", holder: "b")
            #expect(try !store.holdLease("outbox:push", holder: "b", ttl: .seconds(30)), "b released a's lease")
            try store.releaseLease("outbox:push", holder: "a")
            #expect(try store.holdLease("outbox:push", holder: "b", ttl: .milliseconds(200)), "a released, b cannot take it")
        }
        // b stops renewing: its lease expires and a takes it over.
        try await eventually("the expired lease to pass to a", timeout: .seconds(10)) {
            try await offCooperativePool { try store.holdLease("outbox:push", holder: "a", ttl: .seconds(30)) }
        }
        #expect(try store.activeLeases().map(\.holder) == ["a"])
    }

    /// Each commit's outputs are packed apart: a dispatcher that confirmed a later commit's outputs
    /// removes exactly those, and leaves the earlier one's, which committed below what it read.
    @Test func deliveredOutputsAreRemovedExactlyLeavingOnesThatCommittedBelowThem() async throws {
        let store = try await Self.emptyStore()
        try await offCooperativePool {
            let router = Self.router(store)
            // Each commit's outputs: what it added to the outbox.
            var commits: [[Int64]] = []
            for commit in 0..<3 {
                let before = Set(try store.pendingOutputs(sink: "sink", after: 0, limit: 100).map(\.sequence))
                _ = try router.commit((0..<5).map { Self.message("m\(commit)-\($0)", at: 1000 * commit + $0) })
                commits.append(try store.pendingOutputs(sink: "sink", after: 0, limit: 100).map(\.sequence).filter { !before.contains($0) })
            }
            let first = commits[0], second = commits[1], third = commits[2]
            #expect(!first.isEmpty && !second.isEmpty && !third.isEmpty)
            // The dispatcher confirmed the second commit's and the third's, not the first's.
            try store.removeOutputs(sink: "sink", delivered: second + third)
            #expect(try store.pendingOutputs(sink: "sink", after: 0, limit: 100).map(\.sequence) == first)
        }
    }

    /// Within one commit's outputs only the delivered run that starts at the first undelivered output
    /// counts; an output confirmed after a gap is delivered again (at least once, never lost).
    @Test func aConfirmationAfterAGapLeavesTheGapAndWhatFollowsIt() async throws {
        let store = try await Self.emptyStore()
        try await offCooperativePool {
            _ = try Self.router(store).commit((0..<5).map { Self.message("m\($0)", at: 1000 + $0) })
            let pending = try store.pendingOutputs(sink: "sink", after: 0, limit: 100)
            #expect(pending.count > 3)
            try store.removeOutputs(sink: "sink", delivered: [pending[0].sequence, pending[1].sequence, pending[3].sequence])
            #expect(try store.pendingOutputs(sink: "sink", after: 0, limit: 100).map(\.sequence) == pending.dropFirst(2).map(\.sequence))
            // Read on from a cursor inside the pack, as a dispatcher does between purges.
            #expect(try store.pendingOutputs(sink: "sink", after: pending[2].sequence, limit: 100).map(\.sequence)
                    == pending.dropFirst(3).map(\.sequence))
            try store.removeOutputs(sink: "sink", delivered: pending.dropFirst(2).map(\.sequence))
            #expect(try store.pendingOutputs(sink: "sink", after: 0, limit: 100).isEmpty)
            #expect(try store.outboxDepth().isEmpty)
        }
    }

    static func emptyStore() async throws -> PostgresChatStore {
        let url = try await PostgresCluster.shared().createDatabase()
        return try await offCooperativePool {
            try PostgresChatStore(settings: PostgresStoreSettings(url: url), logger: Self.logger)
        }
    }

    static func message(_ id: String, at milliseconds: Int) -> SourceRecord {
        record(.messageReceived(MessageReceived(chat: "c", id: MessageID(id), sender: "alice", recipients: ["bob"], body: "x",
                                                sentAt: Timestamp(milliseconds: Int64(milliseconds)))))
    }
}

extension SplitMix64 {
    /// A number in `0..<bound`.
    mutating func next(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
