import ArgumentParser
import Foundation
import HeraldAdapters
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
            flushes the outbox (up to outbox.drain_timeout_s) and exits 0 within 10 seconds. On SIGHUP it reads \
            the config again: if it is valid, the gateway shuts down the same way and starts again on it in this \
            process; if not, the error is logged and the running config stays.
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
        // SIGHUP reloads the config once the gateway listens for it; until then, and between two runs, it is
        // ignored rather than ending the process (its default). Children start with default dispositions.
        signal(SIGHUP, SIG_IGN)
        var configuration = try config.load()
        let registry = PrometheusCollectorRegistry()
        let path = config.path
        let reload: @Sendable () throws -> HeraldConfiguration = {
            try ConfigurationLoader(registry: BuiltinAdapters.registry, environment: ProcessInfo.processInfo.environment).load(path: path)
        }
        while true {
            let allocator = MallocTuning.settings(for: ProcessInfo.processInfo.environment, sqliteStore: configuration.store.url == nil)
            MallocTuning.applyMmapThreshold(of: allocator)
            let format = logFormat ?? configuration.log.format
            let logger = makeLogger(level: logLevel ?? configuration.log.level, format: format)
            let fromEnvironment = "from the environment or glibc's default"
            logger.debug("Memory allocator set up.", metadata: [
                "malloc_arena_max": "\(allocator.arenaLimit.map(String.init) ?? fromEnvironment)",
                "malloc_mmap_threshold": "\(allocator.mmapThreshold.map(String.init) ?? fromEnvironment)",
            ])
            let gateway = Gateway(configuration: configuration, logger: logger, metrics: PrometheusMetricsFactory(registry: registry),
                                  openStore: { section, logger, metrics in try section.open(logger: logger, metrics: metrics) },
                                  reloadConfiguration: reload) { parts in
                parts.configuration.admin.enabled ? [try AdminServer(parts: parts, registry: registry)] : []
            }
            let exit: Gateway.Exit
            do {
                exit = try await gateway.run()
            } catch let error where format == .json {
                // A log shipper reading JSON lines gets the reason the gateway stopped as one of them too.
                logger.critical("Herald stopped on an error.", metadata: ["error": "\(error)"])
                throw ExitCode.failure
            }
            guard case .reload(let next) = exit else { break }
            configuration = next
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

extension LogSection.Format: ExpressibleByArgument {}
