import HeraldPluginAPI
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Reloads the config on SIGHUP, as Telegraf does: the file is read and validated again; a config that
/// fails validation is logged and the running one stays; a valid one ends the service, which shuts the
/// gateway down gracefully (sources commit and acknowledge what is in flight, the outbox drains), and
/// `herald run` starts it again on the new config in the same process.
final class ConfigurationReloader: Service {
    private let load: @Sendable () throws -> HeraldConfiguration
    private let logger: Logger
    private let accepted = Mutex<HeraldConfiguration?>(nil)

    /// - Parameter load: reads and validates the config file, as `herald check` does.
    init(load: @escaping @Sendable () throws -> HeraldConfiguration, logger: Logger) {
        self.load = load
        self.logger = logger
    }

    /// The config a SIGHUP brought in, once the service has ended for it.
    var acceptedConfiguration: HeraldConfiguration? { accepted.withLock { $0 } }

    /// Waits for SIGHUP until one brings a valid config or the gateway shuts down.
    func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            do {
                let configuration = try load()
                accepted.withLock { $0 = configuration }
                logger.notice("SIGHUP: the config is valid; restarting the gateway on it.")
                return
            } catch {
                logger.error("SIGHUP: the config is not valid; the running config stays.", metadata: ["error": "\(error)"])
            }
        }
    }
}
