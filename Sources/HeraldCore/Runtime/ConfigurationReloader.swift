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
    private let state = Mutex(State())

    private struct State {
        var accepted: HeraldConfiguration?
        var terminated = false
    }

    /// - Parameter load: reads and validates the config file, as `herald check` does.
    init(load: @escaping @Sendable () throws -> HeraldConfiguration, logger: Logger) {
        self.load = load
        self.logger = logger
    }

    /// The config a SIGHUP brought in, once the service has ended for it; `nil` when SIGTERM or SIGINT
    /// came too, since then the gateway is to stop, not start again.
    var acceptedConfiguration: HeraldConfiguration? { state.withLock { $0.terminated ? nil : $0.accepted } }

    /// Waits for SIGHUP until one brings a valid config or the gateway shuts down.
    func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            do {
                let configuration = try load()
                state.withLock { $0.accepted = configuration }
                logger.notice("SIGHUP: the config is valid; restarting the gateway on it.")
                return
            } catch {
                logger.error("SIGHUP: the config is not valid; the running config stays.", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Runs `group` (the gateway's service group) while noting SIGTERM and SIGINT, which the group handles:
    /// one that arrives while the gateway shuts down for a reload stops `herald run` instead.
    func watchingTermination(_ group: () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                for await _ in await UnixSignalsSequence(trapping: .sigterm, .sigint) {
                    self.state.withLock { $0.terminated = true }
                }
            }
            do {
                try await group()
            } catch {
                tasks.cancelAll()
                throw error
            }
            tasks.cancelAll()
        }
    }
}
