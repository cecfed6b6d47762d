import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import MQTTAdapter
import Testing

/// The MQTT source reads the next burst while the last one commits, and commits it while the last one is
/// synced. Its PUBACKs must still wait for every commit to be durable: here the first commit is held and
/// then fails, or cannot be made durable, so the broker must redeliver.
@Suite("MQTT acknowledgements while a commit runs")
struct ReadAheadAcknowledgementTests {
    @Test func aPubackWaitsForTheCommitStillRunningAndAFailedCommitIsRedelivered() async throws {
        try await Self.publishOneMessage(source: "held", prepare: { ingest in
            ingest.holdNextCommit()
            ingest.failNextCommits(1)
        }) { ingest in
            try await eventually("the first commit to start") { ingest.isHoldingCommit }
            ingest.releaseHeldCommit()
            // Had the PUBACK left before the commit ended, the broker would consider m1 delivered and never
            // send it again; the failed commit would have lost it.
            try await eventually("m1 to be redelivered and committed") { Self.messageIDs(ingest.records) == ["m1"] }
        }
    }

    @Test func aCommitThatCannotBeMadeDurableIsNotAcknowledged() async throws {
        try await Self.publishOneMessage(source: "unsynced", prepare: { $0.failNextDurabilities(1) }) { ingest in
            // The first commit records m1 and then cannot be made durable: had its PUBACK left once the
            // transaction returned, the broker would not send m1 again.
            try await eventually("m1 to be redelivered and committed again") { Self.messageIDs(ingest.records) == ["m1", "m1"] }
        }
    }

    /// Starts a source of one-message bursts on a broker of its own, with its ingest prepared, publishes m1
    /// once the source is connected, and checks what follows with `then`.
    ///
    /// One message is one burst: after it the loop finds nothing more to read, which is exactly when it
    /// would write PUBACKs if it did not wait for the commit.
    private static func publishOneMessage(source name: String, prepare: (RecordingIngest) -> Void,
                                          then check: (RecordingIngest) async throws -> Void) async throws {
        let broker = try await MosquittoBroker()
        let source = try RunningSource(yaml: RunningSource.yaml(name, broker: broker, extra: "    max_batch: 1"), prepare: prepare)
        defer { source.task.cancel() }
        try await eventually("the source to connect") { source.context.health.snapshot.connected }
        let publisher = try await TestMQTTClient(port: broker.port)
        try publisher.publish("chats/c1/messages", #"{"id":"m1","from":"alice","to":["bob"],"body":"hi","sent_at":1700000000000}"#)
        try await publisher.waitForAcknowledgements(1)
        try await check(source.ingest)
        try await publisher.close()
    }

    private static func messageIDs(_ records: [SourceRecord]) -> [String] {
        records.compactMap { record in
            if case .event(.messageReceived(let message)) = record.outcome { message.id.rawValue } else { nil }
        }
    }
}
