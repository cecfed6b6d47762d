public import HeraldPluginAPI
import Logging
public import ServiceLifecycle
import Synchronization

/// Runs a source that only one instance of a deployment may run at a time
/// (``SourceConfiguration/runsOncePerDeployment``) under a ``Lease`` named `source:NAME`.
///
/// While another instance holds the lease this one stands by (its health says so, and readiness
/// does not count it as down) and asks again every third of the lease's TTL. Once it holds the
/// lease it runs the source and renews the lease as often; if a renewal fails or the lease went to
/// another instance, it stops the source, which commits and acknowledges what it has, and stands by
/// again. The source's cursor lives in the store's checkpoints, so the next holder goes on from the
/// last commit.
public struct SingletonSourceService: Service, CustomStringConvertible {
    let source: any SourceAdapter
    let context: SourceContext
    let lease: Lease
    let logger: Logger
    /// The running turn's shutdown signal, so graceful shutdown stops the source at once.
    private let turn = CurrentTurn()
    /// While the store refuses the lease, one warning every ten seconds says so, with the number held back.
    private let leaseFailureLog = RateLimitedLog(intervalMilliseconds: 10_000)

    /// Creates the service.
    public init(source: any SourceAdapter, context: SourceContext, lease: Lease) {
        self.source = source
        self.context = context
        self.lease = lease
        self.logger = context.logger
    }

    /// `source NAME (one instance at a time)`: how the service lifecycle's log lines name it, without the
    /// source's settings and their secrets.
    public var description: String { "source \(source.name) (one instance at a time)" }

    /// Runs until graceful shutdown.
    public func run() async throws {
        let stopping = context.shutdown
        await withGracefulShutdownHandler {
            var standingBy = false
            while !stopping.isTriggered {
                let held: Bool
                do {
                    held = try await lease.check().held
                } catch {
                    // Not a standby: no instance can run the source while the store refuses leases, so
                    // readiness fails with the store's reason.
                    if let suppressed = leaseFailureLog.admit(key: "lease", now: context.clock.now()) {
                        logger.warning("Cannot reach the store to take the source's lease; asking again.", metadata: [
                            "error": "\(error)", "suppressed": "\(suppressed)",
                        ])
                    }
                    context.health.report(standby: false, at: context.clock.now())
                    context.health.report(problem: "cannot take the source's lease: \(error)")
                    standingBy = false
                    await stopping.wait(timeout: lease.ttl / 3)
                    continue
                }
                guard held else {
                    if !standingBy {
                        logger.info("Source stands by: another instance runs it.", metadata: ["lease": "\(lease.name)"])
                        context.health.report(standby: true, at: context.clock.now())
                        standingBy = true
                    }
                    await stopping.wait(timeout: lease.ttl / 3)
                    continue
                }
                standingBy = false
                context.health.report(standby: false, at: context.clock.now())
                context.health.report(problem: nil)
                logger.info("This instance runs the source now.", metadata: ["lease": "\(lease.name)"])
                await runWhileHeld()
            }
            await lease.release()
        } onGracefulShutdown: { [turn] in
            stopping.trigger()
            turn.signal.withLock { $0?.trigger() }
        }
    }

    /// Runs the source until it ends, the gateway stops, or the lease is lost.
    private func runWhileHeld() async {
        let turn = ShutdownSignal()
        self.turn.signal.withLock { $0 = turn }
        defer { self.turn.signal.withLock { $0 = nil } }
        if context.shutdown.isTriggered { turn.trigger() }
        var context = context
        context.shutdown = turn
        let lease = lease, logger = logger, source = source, running = context
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await source.run(context: running)
                } catch {
                    logger.error("Source failed.", metadata: ["error": "\(error)"])
                }
                turn.trigger()
            }
            group.addTask {
                while !turn.isTriggered {
                    await turn.wait(timeout: lease.ttl / 3)
                    if turn.isTriggered { break }
                    let held = (try? await lease.check().held) ?? false
                    if !held {
                        logger.warning("The source's lease is lost; stopping it here.", metadata: ["lease": "\(lease.name)"])
                        break
                    }
                }
                turn.trigger()
            }
            await group.waitForAll()
        }
    }
}

/// Holds the shutdown signal of the turn that runs now.
private final class CurrentTurn: Sendable {
    let signal = Mutex<ShutdownSignal?>(nil)
}
