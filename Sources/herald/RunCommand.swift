import ArgumentParser
import Foundation
import HeraldAdmin
import HeraldCore
import HeraldPostgres
import HeraldPluginAPI
import Prometheus

#if canImport(Glibc)
import Glibc
#endif

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

    @Option(help: "Override log.level for this run.")
    var logLevel: Logger.Level?

    @Option(help: "Override log.format for this run (json: one JSON object per line).")
    var logFormat: LogSection.Format?

    func run() async throws {
        // Past a file-size limit (ulimit -f, LimitFSIZE=) a write should fail like a full disk, which the store
        // reports and waits out, rather than kill the process with SIGXFSZ.
        signal(SIGXFSZ, SIG_IGN)
        let configuration = try config.load()
        let allocator = MallocTuning.settings(for: ProcessInfo.processInfo.environment, sqliteStore: configuration.store.url == nil)
        MallocTuning.applyMmapThreshold(of: allocator)
        let format = logFormat ?? configuration.log.format
        let logger = makeLogger(level: logLevel ?? configuration.log.level, format: format)
        let fromEnvironment = "from the environment or glibc's default"
        logger.debug("Memory allocator set up.", metadata: [
            "malloc_arena_max": "\(allocator.arenaLimit.map(String.init) ?? fromEnvironment)",
            "malloc_mmap_threshold": "\(allocator.mmapThreshold.map(String.init) ?? fromEnvironment)",
        ])
        let registry = PrometheusCollectorRegistry()
        let gateway = Gateway(configuration: configuration, logger: logger, metrics: PrometheusMetricsFactory(registry: registry),
                              openStore: { section, logger, metrics in try section.open(logger: logger, metrics: metrics) }) { parts in
            parts.configuration.admin.enabled ? [try AdminServer(parts: parts, registry: registry)] : []
        }
        do {
            try await gateway.run()
        } catch let error where format == .json {
            // A log shipper reading JSON lines gets the reason the gateway stopped as one of them too.
            logger.critical("Herald stopped on an error.", metadata: ["error": "\(error)"])
            throw ExitCode.failure
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

extension LogSection.Format: ExpressibleByArgument {}
