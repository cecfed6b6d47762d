import ArgumentParser
import Foundation
import HeraldAdapters
import HeraldCore
import HeraldPluginAPI

/// `--config FILE`, shared by every subcommand.
struct ConfigOption: ParsableArguments {
    @Option(name: [.short, .long], help: ArgumentHelp(
        "The YAML config file.", discussion: "Defaults to $HERALD_CONFIG, then ./herald.yaml.", valueName: "file"))
    var config: String?

    var path: String {
        config ?? ProcessInfo.processInfo.environment["HERALD_CONFIG"] ?? "herald.yaml"
    }

    /// Loads and validates the config, or prints the located error and exits with EX_CONFIG (78).
    func load() throws -> HeraldConfiguration {
        let loader = ConfigurationLoader(registry: BuiltinAdapters.registry, environment: ProcessInfo.processInfo.environment)
        do {
            return try loader.load(path: path)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(78)
        }
    }
}

/// A logger that writes to standard error at `level`, in swift-log's text lines or one JSON object a line.
func makeLogger(level: Logger.Level, format: LogSection.Format = .text) -> Logger {
    var logger: Logger
    switch format {
    case .text: logger = Logger(label: "herald") { StreamLogHandler.standardError(label: $0) }
    case .json:
        let output = LogLineOutput.standardError(), clock = SystemClock()
        logger = Logger(label: "herald") { _ in JSONLogHandler(output: output, clock: clock) }
    }
    logger.logLevel = level
    return logger
}

/// The router a command applies changes through, as the gateway of `configuration` would: its policy and
/// its sinks' routing (no sink connects; outputs wait in the outbox for the running gateway).
func makeRouter(_ configuration: HeraldConfiguration, store: any ChatStore, logger: Logger) throws -> EventRouter {
    var sinkAccepts: [(name: String, accepts: Set<OutputKind>)] = []
    for section in configuration.sinks { sinkAccepts.append((section.name, try section.settings.makeSink(name: section.name).accepts)) }
    return EventRouter(store: store, policy: configuration.router.policy, routing: OutputRouting(sinkAccepts: sinkAccepts),
                       clock: SystemClock(), metrics: RouterMetrics(factory: NOOPMetricsHandler.instance),
                       signal: OutboxSignal(), logger: logger)
}
