import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Logging
import MetricsTestKit
import MQTTAdapter
import Testing

/// A source from YAML, running against a real broker with a recording ingest.
struct RunningSource {
    let ingest = RecordingIngest()
    let metrics = TestMetrics()
    let name: String
    let context: SourceContext
    let task: Task<Void, any Error>

    /// Loads the first source of `yaml` as a user's file would be, lets `adjust` change an MQTT source's
    /// settings (to values beyond what a file may set), and runs it; `prepare` sees the ingest first.
    init(yaml: String, adjust: (inout MQTTSourceConfiguration) -> Void = { _ in },
         prepare: (RecordingIngest) -> Void = { _ in }) throws {
        let configuration = try ConfigurationLoader(registry: NormaliserTests.registry, environment: [:]).load(text: yaml, file: "test.yaml")
        name = configuration.sources[0].name
        var settings = configuration.sources[0].settings
        if var mqtt = settings as? MQTTSourceConfiguration {
            adjust(&mqtt)
            settings = mqtt
        }
        let source = try settings.makeSource(name: name)
        let context = SourceContext(ingest: ingest, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
                                    metrics: SourceMetrics(adapter: name, factory: metrics), shutdown: ShutdownSignal(),
                                    clock: SystemClock(), reconnect: Backoff(baseSeconds: 0.05, capSeconds: 0.2))
        self.context = context
        prepare(ingest)
        task = Task { try await source.run(context: context) }
    }

    /// One MQTT source named `name` on `broker`, with `extra` option lines (indented four spaces).
    static func yaml(_ name: String, broker: MosquittoBroker, extra: String) -> String {
        """
        sources:
          - name: \(name)
            type: mqtt
            url: \(broker.url)
            client_id: \(name)-\(broker.port)
        \(extra)
        """
    }

    /// Message ids of the events committed so far.
    var messageIDs: [String] {
        ingest.records.compactMap { record in
            guard case .event(.messageReceived(let message)) = record.outcome else { return nil }
            return message.id.rawValue
        }
    }

    /// Messages the source has read from the broker (committed or not).
    var received: Int64 {
        (try? metrics.expectCounter("herald_source_received_total", [("adapter", name)]).totalValue) ?? 0
    }

    func stop() async {
        context.shutdown.trigger()
        _ = await task.result
    }
}
