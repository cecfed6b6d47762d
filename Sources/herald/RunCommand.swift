import ArgumentParser
import HeraldCore
import HeraldPluginAPI
import Metrics

/// `herald run`
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the gateway until SIGTERM or SIGINT.",
        discussion: """
            On SIGTERM/SIGINT Herald stops taking new messages, commits and acknowledges what is in flight, \
            flushes the outbox (up to outbox.drain_timeout_s) and exits 0 within 10 seconds.
            """)

    @OptionGroup var config: ConfigOption

    @Option(help: "Override log.level (trace, debug, info, notice, warning, error, critical).")
    var logLevel: Logger.Level?

    func run() async throws {
        let configuration = try config.load()
        let logger = makeLogger(level: logLevel ?? configuration.log.level)
        try await Gateway(configuration: configuration, logger: logger, metrics: NOOPMetricsHandler.instance).run()
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
