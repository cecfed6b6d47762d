import CoreMetrics
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
    private let clock: any WallClock
    private let state = Mutex(State())
    private let succeeded: Counter
    private let failed: Counter
    private let lastSuccessful: Gauge
    private let lastSuccessTime: Gauge

    private struct State {
        var accepted: HeraldConfiguration?
        var terminated = false
    }

    /// - Parameters:
    ///   - load: reads and validates the config file, as `herald check` does.
    ///   - metrics: where `herald_config_reloads_total{result}`, `herald_config_last_reload_successful` and
    ///     `herald_config_last_reload_success_timestamp_seconds` go.
    init(load: @escaping @Sendable () throws -> HeraldConfiguration, logger: Logger, metrics: any MetricsFactory, clock: any WallClock) {
        self.load = load
        self.logger = logger
        self.clock = clock
        succeeded = Counter(label: "herald_config_reloads_total", dimensions: [("result", "success")], factory: metrics)
        failed = Counter(label: "herald_config_reloads_total", dimensions: [("result", "failure")], factory: metrics)
        lastSuccessful = Gauge(label: "herald_config_last_reload_successful", factory: metrics)
        lastSuccessTime = Gauge(label: "herald_config_last_reload_success_timestamp_seconds", factory: metrics)
    }

    /// The config a SIGHUP brought in, once the service has ended for it; `nil` when SIGTERM or SIGINT
    /// came too, since then the gateway is to stop, not start again.
    var acceptedConfiguration: HeraldConfiguration? { state.withLock { $0.terminated ? nil : $0.accepted } }

    /// Waits for SIGHUP until one brings a valid config or the gateway shuts down.
    func run() async throws {
        // The gateway runs on a valid config, the one it started with or the one a reload brought.
        lastSuccessful.record(1)
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            do {
                let configuration = try load()
                state.withLock { $0.accepted = configuration }
                succeeded.increment()
                lastSuccessful.record(1)
                lastSuccessTime.record(Double(clock.now().milliseconds) / 1000)
                logger.notice("SIGHUP: the config is valid; restarting the gateway on it.")
                return
            } catch {
                failed.increment()
                lastSuccessful.record(0)
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
