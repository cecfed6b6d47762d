import Dispatch
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Logging
import MQTTAdapter
import Synchronization
import Testing

/// The MQTT source reads the next burst while the last one commits. Its PUBACKs must still wait for
/// every commit: here the first commit is held and then fails, so the broker must redeliver.
@Suite("MQTT acknowledgements while a commit runs")
struct ReadAheadAcknowledgementTests {
    @Test func aPubackWaitsForTheCommitStillRunningAndAFailedCommitIsRedelivered() async throws {
        let broker = try await MosquittoBroker()
        let yaml = """
            sources:
              - name: held
                type: mqtt
                url: \(broker.url)
                client_id: held-\(broker.port)
                max_batch: 1
            """
        let configuration = try ConfigurationLoader(registry: NormaliserTests.registry, environment: [:]).load(text: yaml, file: "held.yaml")
        let source = try configuration.sources[0].settings.makeSource(name: "held")
        let ingest = HeldFirstCommit()
        let context = SourceContext(ingest: ingest, logger: Logger(label: "held") { _ in SwiftLogNoOpLogHandler() },
                                    metrics: SourceMetrics(adapter: "held", factory: NOOPMetricsHandler.instance),
                                    shutdown: ShutdownSignal(), clock: SystemClock(),
                                    reconnect: Backoff(baseSeconds: 0.05, capSeconds: 0.2))
        let running = Task { try await source.run(context: context) }
        defer { running.cancel() }
        try await eventually("the source to connect") { context.health.snapshot.connected }

        // One message, one burst: after it the loop finds nothing more to read, which is exactly when
        // it would write PUBACKs if it did not wait for the commit.
        let publisher = try await TestMQTTClient(port: broker.port)
        try publisher.publish("chats/c1/messages", #"{"id":"m1","from":"alice","to":["bob"],"body":"hi","sent_at":1700000000000}"#)
        try await publisher.waitForAcknowledgements(1)
        try await eventually("the first commit to start") { ingest.heldCommitStarted }
        ingest.failHeldCommit()

        // Had the PUBACK left before the commit ended, the broker would consider m1 delivered and never
        // send it again; the failed commit would have lost it.
        try await eventually("m1 to be redelivered and committed") { ingest.committedMessageIDs == ["m1"] }
        try await publisher.close()
    }
}

/// Holds the first commit until ``failHeldCommit()``, then fails it; later commits are recorded.
final class HeldFirstCommit: IngestHandle {
    private let state = Mutex<(started: Bool, committed: [String])>((false, []))
    private let release = DispatchSemaphore(value: 0)

    var heldCommitStarted: Bool { state.withLock { $0.started } }
    var committedMessageIDs: [String] { state.withLock { $0.committed } }

    func failHeldCommit() { release.signal() }

    func commit(_ records: [SourceRecord], checkpoints: [SourceCheckpoint]) throws(IngestError) -> IngestReport {
        let hold = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started
        }
        if hold {
            release.wait()
            throw IngestError("commit failed on purpose")
        }
        state.withLock { state in
            for record in records {
                if case .event(.messageReceived(let message)) = record.outcome { state.committed.append(message.id.rawValue) }
            }
        }
        var report = IngestReport()
        report.applied = records.count
        return report
    }

    func checkpoint(source: String, key: String) throws(IngestError) -> String? { nil }
}
