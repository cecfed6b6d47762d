import Foundation
import HeraldCore
import HeraldPluginAPI
@testable import HeraldPostgres
import HeraldTestKit
import Logging
import Testing

/// Instances sharing a PostgreSQL store wake each other's outbox dispatchers through `NOTIFY`. An
/// instance's own commits wake its dispatchers in-process already, so its listener skips the
/// notifications they send: each would cost a dispatcher an outbox read that finds nothing new.
@Suite("PostgreSQL store: outbox notifications")
struct PostgresOutboxListenerTests {
    static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// Two stores on one database (two instances) and a router committing through `own`.
    struct Instances {
        let own: PostgresChatStore
        let other: PostgresChatStore
        let settings: PostgresStoreSettings

        init() async throws {
            let settings = try PostgresStoreSettings(url: try await PostgresCluster.shared().createDatabase())
            self.settings = settings
            (own, other) = try await offCooperativePool {
                (try PostgresChatStore(settings: settings, logger: PostgresOutboxListenerTests.logger),
                 try PostgresChatStore(settings: settings, logger: PostgresOutboxListenerTests.logger))
            }
        }

        /// Commits a message from alice to bob through `store`, which queues outputs.
        func commitMessage(_ id: String, through store: PostgresChatStore) async throws {
            let router = EventRouter(store: store, policy: RouterPolicy(), routing: OutputRouting(sinkAccepts: [("sink", Set(OutputKind.allCases))]),
                                     clock: SystemClock(), metrics: RouterMetrics(factory: NOOPMetricsHandler.instance), signal: OutboxSignal(),
                                     logger: PostgresOutboxListenerTests.logger)
            let record = SourceRecord(provenance: Provenance(adapter: "test", origin: "t", rawSize: 0, receivedAt: Timestamp(milliseconds: 1_700_000_000_000)),
                                      outcome: .event(message("c1", MessageID(id), from: "alice", to: ["bob"], at: 1_000)), raw: [])
            let report = try await offCooperativePool { try router.commit([record]) }
            #expect(report.outputs > 0)
        }
    }

    /// Waits are long for a loaded host (a listening connection and a notification take milliseconds here);
    /// they end at the first wake.
    @Test(.timeLimit(.minutes(3)))
    func anInstanceIsWokenByAnothersCommitsAndNotByItsOwn() async throws {
        let instances = try await Instances()
        #expect(instances.own.notificationPayload != instances.other.notificationPayload)
        let signal = OutboxSignal()
        let subscription = signal.subscribe()
        let listener = Task {
            try await PostgresOutboxListener(settings: instances.settings, signal: signal, logger: Self.logger,
                                             ownPayload: instances.own.notificationPayload).run()
        }
        defer { listener.cancel() }
        // The listener wakes the dispatchers once it listens, for whatever was committed before.
        #expect(await Self.wakes(subscription, within: .seconds(90)), "the listener never listened")

        try await instances.commitMessage("m1", through: instances.own)
        // The absence of a wake cannot be awaited; two seconds are hundreds of times what a notification
        // takes to arrive on loopback.
        #expect(await !Self.wakes(subscription, within: .seconds(2)), "the instance's own commit woke its dispatchers")

        try await instances.commitMessage("m2", through: instances.other)
        #expect(await Self.wakes(subscription, within: .seconds(60)), "another instance's commit did not wake the dispatchers")
    }

    /// Whether `subscription` is woken before `limit` passes.
    static func wakes(_ subscription: OutboxSignal.Subscription, within limit: Duration) async -> Bool {
        let start = ContinuousClock.now
        await subscription.wait(timeout: limit)
        return ContinuousClock.now - start < limit
    }
}
