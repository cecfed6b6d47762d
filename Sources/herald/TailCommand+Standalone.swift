import ArgumentParser
import Foundation
import HeraldAdapters
import HeraldCore
import HeraldPluginAPI
import Metrics
import Synchronization

extension TailCommand {
    /// `herald tail --source URL`: runs one source adapter alone and prints what it normalises.
    /// Nothing is stored and no sink runs. The adapter settings (subscriptions, mappings) come from the
    /// first source of the same type in the config, if there is one.
    func runStandalone(url: String, filter: TailFilter, printer: TailPrinter) async throws {
        guard let scheme = url.split(separator: ":").first.map(String.init) else { throw ValidationError("--source needs a URL") }
        let type: String
        let section: String
        let promise: String
        switch scheme {
        case "ws", "wss":
            type = "websocket"
            section = "    url: \(url)\n"
            promise = "from the stream's present position (no resume id is read or stored)"
        case "http", "https":
            type = "rest"
            section = "    endpoints: [{name: tail, url: \"\(url)\"}]\n"
            promise = "from the first page (no cursor is read or stored)"
        default:
            type = scheme.hasSuffix("s") && scheme.count > 2 ? String(scheme.dropLast()) : scheme
            section = "    url: \(url)\n    client_id: herald-tail\n"
            promise = "with a throwaway clean session: the gateway's persistent session is not touched (its messages stay queued for it)"
        }
        let loader = ConfigurationLoader(registry: BuiltinAdapters.registry, environment: ProcessInfo.processInfo.environment)
        let configPath = config ?? ProcessInfo.processInfo.environment["HERALD_CONFIG"] ?? "herald.yaml"
        var settings: (any SourceConfiguration)?
        if FileManager.default.fileExists(atPath: configPath) {
            settings = try loader.load(path: configPath).sources.first { $0.type == type }?.settings
        }
        let source: any SourceAdapter
        do {
            let configuration = try settings
                ?? loader.load(text: "sources:\n  - name: tail\n    type: \(type)\n" + section, file: "--source")
                    .sources[0].settings
            source = try configuration.makePreviewSource(name: "tail", url: url)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(2)
        }
        FileHandle.standardError.write(Data("""
            … running a \(type) source on its own against \(url) \(promise); nothing is stored and no outputs are sent.

            """.utf8))
        let shutdown = ShutdownSignal()
        let printing = PrintingIngest(filter: filter, printer: printer, limit: limit, shutdown: shutdown)
        let clock = SystemClock()
        let context = SourceContext(ingest: printing, logger: makeLogger(level: .warning),
                                    metrics: SourceMetrics(adapter: "tail", factory: NOOPMetricsHandler.instance), shutdown: shutdown, clock: clock)
        try await source.run(context: context)
    }
}

/// An ingest handle that prints instead of storing.
final class PrintingIngest: IngestHandle {
    let filter: TailFilter
    let printer: TailPrinter
    let limit: Int?
    let shutdown: ShutdownSignal
    private let printed = Mutex(0)

    init(filter: TailFilter, printer: TailPrinter, limit: Int?, shutdown: ShutdownSignal) {
        self.filter = filter
        self.printer = printer
        self.limit = limit
        self.shutdown = shutdown
    }

    /// A preview stores nothing, so a source starts from the upstream's current position.
    func checkpoint(source: String, key: String) throws(IngestError) -> String? { nil }

    func commit(_ records: [SourceRecord], checkpoints: [SourceCheckpoint]) throws(IngestError) -> IngestReport {
        var report = IngestReport()
        for record in records {
            switch record.outcome {
            case .event(let event):
                report.applied += 1
                let tailed = TailRecord(event: event, provenance: record.provenance, committedAt: record.provenance.receivedAt,
                                        commitLatencyMilliseconds: 0, applied: true, outputs: [])
                guard filter.matches(tailed), !shutdown.isTriggered else { continue }
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                if let data = try? encoder.encode(TailEventDocument(tailed, includeOutputs: false, showBody: printer.showBody)) {
                    printer.print(String(decoding: data, as: UTF8.self))
                }
                let count = printed.withLock { $0 += 1; return $0 }
                if let limit, count >= limit { shutdown.trigger() }
            case .rejected(let rejection):
                report.deadLettered += 1
                FileHandle.standardError.write(Data("… rejected \(record.provenance.origin): \(rejection)\n".utf8))
            }
        }
        return report
    }
}
