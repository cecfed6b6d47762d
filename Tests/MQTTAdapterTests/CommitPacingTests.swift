import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
@testable import MQTTAdapter
import Testing

/// Under a steady load a small burst waits out the commit interval, so messages share commits; a lone
/// message after a quiet moment commits at once.
@Suite("MQTT commit pacing")
struct CommitPacingTests {
    private let start = ContinuousClock.now
    private let interval = Duration.milliseconds(5)

    @Test("a burst after a lone message, and any burst with pacing off, commits at once")
    func noWaitWithoutASteadyLoad() {
        var pacing = CommitPacing(interval: interval, handover: 1000)
        #expect(pacing.delay(gathered: 3, now: start) == .zero)
        pacing.started(burst: 1, at: start)
        #expect(pacing.delay(gathered: 1, now: start + .milliseconds(1)) == .zero)

        var off = CommitPacing(interval: .zero, handover: 1000)
        off.started(burst: 50, at: start)
        #expect(off.delay(gathered: 1, now: start + .milliseconds(1)) == .zero)
    }

    @Test("after a burst of several, a small burst waits until the interval has passed since that commit began")
    func aSmallBurstWaitsUnderLoad() {
        var pacing = CommitPacing(interval: interval, handover: 1000)
        pacing.started(burst: 4, at: start)
        #expect(pacing.delay(gathered: 2, now: start + .milliseconds(1)) == .milliseconds(4))
        #expect(pacing.delay(gathered: 2, now: start + .milliseconds(5)) == .zero)
        #expect(pacing.delay(gathered: 2, now: start + .milliseconds(9)) == .zero)
        // Nothing gathered: nothing to wait for. A burst that reached the handover size goes now.
        #expect(pacing.delay(gathered: 0, now: start + .milliseconds(1)) == .zero)
        #expect(pacing.delay(gathered: 1000, now: start + .milliseconds(1)) == .zero)
    }

    @Test("a poll timeout rounds up to whole milliseconds")
    func pollMillisecondsRoundUp() {
        #expect(Duration.microseconds(1).pollMilliseconds == 1)
        #expect(Duration.microseconds(4001).pollMilliseconds == 5)
        #expect(Duration.milliseconds(3).pollMilliseconds == 3)
        #expect(Duration.zero.pollMilliseconds == 0)
        #expect(Duration.seconds(-1).pollMilliseconds == 0)
    }

    /// Through a real broker: m1 commits alone (its commit held), m2 and m3 are read meanwhile and commit
    /// together, and m4, published after that, waits for m5 (published once m4 has been read) instead of
    /// committing alone. Without pacing the commits are [1, 2, 1, 1]. With `max_batch: 4` a burst of two
    /// goes at once (half of it), so m4 and m5 commit as soon as m5 is read; the interval is set
    /// beyond the configurable range so that a slow machine cannot end it before m5 arrives.
    @Test func underASteadyLoadAMessageWaitsForTheNextOne() async throws {
        let broker = try await MosquittoBroker()
        let source = try RunningSource(yaml: RunningSource.yaml("paced", broker: broker, extra: "    max_batch: 4"),
                                       adjust: { $0.commitIntervalMilliseconds = 600_000 })
        defer { source.task.cancel() }
        let ingest = source.ingest
        try await eventually("the source to connect") { source.context.health.snapshot.connected }
        let received = { source.received }

        let publisher = try await TestMQTTClient(port: broker.port)
        ingest.holdNextCommit()
        try publisher.publish("chats/c1/messages", Self.message(1))
        try await eventually("m1's commit to start") { ingest.isHoldingCommit }
        for index in 2...3 { try publisher.publish("chats/c1/messages", Self.message(index)) }
        try await eventually("m2 and m3 to be read while m1 commits") { received() == 3 }
        ingest.releaseHeldCommit()
        try await eventually("m2 and m3 to commit") { ingest.records.count == 3 }

        try publisher.publish("chats/c1/messages", Self.message(4))
        try await eventually("m4 to be read") { received() == 4 }
        try publisher.publish("chats/c1/messages", Self.message(5))
        try await eventually("m4 and m5 to commit") { ingest.records.count == 5 }
        #expect(ingest.commitSizes == [1, 2, 2])
        try await publisher.close()
    }

    private static func message(_ index: Int) -> String {
        #"{"id":"m\#(index)","from":"alice","to":["bob"],"body":"hi","sent_at":1700000000000}"#
    }
}
