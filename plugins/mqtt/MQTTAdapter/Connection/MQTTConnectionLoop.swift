import Foundation
import HeraldPluginAPI
import Logging
import Mosquitto
import Synchronization

/// Drives one libmosquitto connection on a dedicated thread and keeps it alive.
///
/// Each turn: wait for the socket → read a burst of packets (callbacks run now; PUBACKs are only
/// queued because the client is in the threaded state) → hand the burst's commit
/// (``Hooks/takeBurst``) to a ``BurstCommitter`` → while it commits, gather the next burst from
/// what arrives (up to `maxBurst`; the commit's end wakes the loop) → when it ends, commit what was
/// gathered (while the store syncs the last commit), up to ``maxUnacknowledgedBursts`` in a row → once
/// a commit ends with nothing gathered (or that bound is reached), wait until every burst read is
/// committed and durable: write queued packets (the PUBACKs leave only now) → keepalive. Bursts therefore grow with the commit time: under load, more messages share
/// each commit's database pages. An idle committer does not wait for a full burst: it takes what was
/// read once that is half of one. Under a steady load a small burst waits out the commit interval
/// first (``CommitPacing``), so commits do not shrink to a few messages each.
///
/// libmosquitto writes all queued packets at once, so PUBACKs can only be written at a moment when
/// every message read so far is committed; reading ahead therefore bounds how many bursts it spans.
/// A failure of the connection or of a commit drops the client *without* writing, so nothing
/// uncommitted is ever acknowledged; the loop reconnects after an exponential backoff with full jitter.
final class MQTTConnectionLoop: @unchecked Sendable {
    /// What the owner plugs in. All run on the loop thread.
    struct Hooks: Sendable {
        var onMessage: @Sendable (MosquittoMessage) -> Void = { _ in }
        var onPublish: @Sendable (Int32, MosquittoReasonCode) -> Void = { _, _ in }
        var onConnectionChange: @Sendable (_ connected: Bool) -> Void = { _ in }
        /// The broker refused subscriptions (their filters and reasons), or `nil` once every one is granted.
        var onProblem: @Sendable (_ problem: String?) -> Void = { _ in }
        /// After each burst: the commit of what the burst read (run on the committer's thread, one
        /// at a time, in order), returning the wait for it to be durable, or `nil` when there is nothing
        /// to commit.
        var takeBurst: @Sendable () -> (@Sendable () throws -> CommitDurability)? = { nil }
    }

    /// Bursts read ahead of their acknowledgement: the loop reads the next burst while the last
    /// commits, and writes PUBACKs at the latest after this many. Counting bursts, not messages, keeps
    /// PUBACKs prompt under a steady moderate load, where every burst is small.
    static let maxUnacknowledgedBursts = 4

    /// A burst goes to an idle committer once it holds this many messages (half of `maxBurst`), rather
    /// than when it is full: after PUBACKs are written the store would otherwise wait for a whole burst to
    /// be read. Not much less either: a commit costs about as much for the chats it touches as for its
    /// messages, so a small first burst after each pause takes the store nearly a whole commit's time for
    /// few messages. Later bursts fill while the commit before them runs.
    private var handoverWhenIdle: Int { max(1, maxBurst / 2) }

    enum LoopError: Error, CustomStringConvertible {
        case refused(MosquittoReasonCode)
        case client(MosquittoError)
        var description: String {
            switch self {
            case .refused(let code): "broker refused the connection (CONNACK \(code))"
            case .client(let error): error.description
            }
        }
    }

    private let options: MosquittoOptions
    private let filters: [String]
    private let hooks: Hooks
    private let shutdown: ShutdownSignal
    private let logger: Logger
    private let metrics: SourceMetrics?
    private let maxBurst: Int
    private let commitInterval: Duration
    private let reconnect: Backoff
    /// The loop thread's name: the adapter's direction and instance name (`mqtt-in broker`).
    private let threadName: String
    private let current = Mutex<MosquittoClient?>(nil)

    // Loop-thread state.
    private var messagesRead = 0
    /// PUBACKs read (a sink's publishes confirmed): a read that found one may find more waiting.
    private var acknowledgementsRead = 0
    /// Messages read into the burst being gathered (not yet handed to the committer).
    private var gathered = 0
    private var refusal: MosquittoReasonCode?
    /// SUBSCRIBEs awaiting their SUBACK (message id → filter), and filters the broker refused.
    private var pendingSubscriptions: [Int32: String] = [:]
    private var refusedFilters: [String: MosquittoReasonCode] = [:]
    private var stableSince: ContinuousClock.Instant?

    init(threadName: String, options: MosquittoOptions, filters: [String], hooks: Hooks, shutdown: ShutdownSignal, logger: Logger,
         metrics: SourceMetrics?, maxBurst: Int, commitInterval: Duration = .zero, reconnect: Backoff) {
        self.threadName = threadName
        self.commitInterval = commitInterval
        self.reconnect = reconnect
        self.options = options
        self.filters = filters
        self.hooks = hooks
        self.shutdown = shutdown
        self.logger = logger
        self.metrics = metrics
        self.maxBurst = maxBurst
    }

    /// The connected client, for publishing from other threads.
    var client: MosquittoClient? { current.withLock { $0 } }

    /// Runs the loop on a new thread until shutdown; returns when the thread has finished.
    func run() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                NamedThread.start(named: threadName) { [self] in
                    runOnCurrentThread()
                    done.resume()
                }
            }
        } onCancel: {
            shutdown.trigger()
        }
    }

    private func runOnCurrentThread() {
        var backoff = reconnect
        while !shutdown.isTriggered {
            do {
                try session()
            } catch {
                hooks.onConnectionChange(false)
                metrics?.connectionFailures.increment()
                if let stableSince, ContinuousClock.now - stableSince > .seconds(30) { backoff.reset() }
                let delay = backoff.nextDelaySeconds()
                // A failed commit ends the session too: dropping the connection unwritten is what keeps
                // the burst unacknowledged, so the broker delivers it again after the reconnect.
                let message: Logger.Message = error is IngestError
                    ? "Commit failed; nothing of it was acknowledged. Reconnecting, so that the broker delivers it again."
                    : "MQTT connection failed; reconnecting."
                logger.warning(message, metadata: [
                    "broker": "\(options.host):\(options.port)", "error": "\(error)",
                    "retry_in_s": "\(String(format: "%.2f", delay))",
                ])
                sleep(seconds: delay)
            }
            stableSince = nil
        }
    }

    private func session() throws {
        refusal = nil
        let client = try MosquittoClient(options: options, callbacks: callbacks())
        current.withLock { $0 = client }
        defer { current.withLock { $0 = nil } }
        do {
            try client.connect()
        } catch {
            throw LoopError.client(error)
        }
        let committer = BurstCommitter(label: "herald-mqtt-commit-\(options.clientID)", whenFinished: { client.wake() })
        // Whatever ends the session, no commit of it may still run when the next one starts.
        defer { try? committer.wait() }
        var unacknowledgedBursts = 0
        var moreWaiting = false
        var pacing = CommitPacing(interval: commitInterval, handover: handoverWhenIdle)
        gathered = 0
        while !shutdown.isTriggered {
            if let refusal { throw LoopError.refused(refusal) }
            // A small burst under a steady load waits out the commit interval, gathering what arrives.
            let pause = committer.isRunning ? .zero : pacing.delay(gathered: gathered, now: .now)
            // While a commit runs, gather what arrives (its end wakes the poll); queued PUBACKs wait.
            let timeout = moreWaiting ? 0 : pause > .zero ? min(pause.pollMilliseconds, 100) : 100
            let readable = client.waitForActivity(timeoutMilliseconds: timeout, writes: !committer.isPending && pause == .zero)
            if (readable || moreWaiting) && gathered < maxBurst {
                moreWaiting = try readBurst(client, committer: committer)
            }
            if committer.isRunning && gathered < maxBurst { continue }
            if pacing.delay(gathered: gathered, now: .now) > .zero { continue }
            try committer.waitForTransaction()
            let burst = gathered
            if let commit = hooks.takeBurst() {
                gathered = 0
                pacing.started(burst: burst, at: .now)
                try committer.start(commit)
                unacknowledgedBursts += 1
                if unacknowledgedBursts < Self.maxUnacknowledgedBursts { continue }
            }
            // Every burst read is committed and durable: acknowledge them.
            try committer.wait()
            unacknowledgedBursts = 0
            do {
                try client.writePending()
                try client.housekeeping()
            } catch {
                throw LoopError.client(error)
            }
        }
        try committer.wait()
        if let commit = hooks.takeBurst() { try commit().wait() }
        try? client.writePending()
        client.disconnect()
        hooks.onConnectionChange(false)
    }

    /// Reads messages and PUBACKs until neither is waiting, the burst being gathered holds `maxBurst`,
    /// `maxBurst` PUBACKs were read, or the committer is idle and the burst holds ``handoverWhenIdle``
    /// (the store should not wait for a full burst). A sink's connection reads PUBACKs: reading every
    /// one that waits before the next write (each lets a queued publish go) spares a `poll` per PUBACK.
    /// - Returns: whether it stopped early (more may be waiting, even where `poll` cannot see it,
    ///   e.g. inside TLS buffers).
    private func readBurst(_ client: MosquittoClient, committer: BurstCommitter) throws -> Bool {
        do {
            var acknowledgements = 0
            while gathered < maxBurst, acknowledgements < maxBurst {
                if gathered >= handoverWhenIdle && !committer.isRunning { return true }
                let before = messagesRead, acknowledgedBefore = acknowledgementsRead
                try client.readPacket()
                if messagesRead != before {
                    gathered += 1
                } else if acknowledgementsRead != acknowledgedBefore {
                    acknowledgements += 1
                } else {
                    return false
                }
            }
            return true
        } catch {
            // Keep what was read: it cannot be acknowledged now, so the broker redelivers it.
            try? committer.wait()
            if let commit = hooks.takeBurst() { try? commit().wait() }
            throw LoopError.client(error)
        }
    }

    private func callbacks() -> MosquittoCallbacks {
        MosquittoCallbacks(
            onConnect: { [self] code, sessionPresent in
                guard code.isSuccess else {
                    refusal = code
                    return
                }
                pendingSubscriptions = [:]
                for filter in filters {
                    do {
                        if let messageID = try client?.subscribe(filter, qos: 1) { pendingSubscriptions[messageID] = filter }
                    } catch {
                        logger.error("MQTT subscribe failed.", metadata: ["filter": "\(filter)", "error": "\(error)"])
                    }
                }
                stableSince = .now
                metrics?.connects.increment()
                logger.info("MQTT connected.", metadata: [
                    "broker": "\(options.host):\(options.port)", "client_id": "\(options.clientID)",
                    "session_present": "\(sessionPresent)", "protocol": "\(options.protocolVersion == .v5 ? "5" : "3.1.1")",
                ])
                hooks.onConnectionChange(true)
            },
            onMessage: { [self] message in
                messagesRead += 1
                hooks.onMessage(message)
            },
            onPublish: { [self] messageID, reason in
                acknowledgementsRead += 1
                hooks.onPublish(messageID, reason)
            },
            onSubscribe: { [self] messageID, granted in
                guard let filter = pendingSubscriptions.removeValue(forKey: messageID) else { return }
                if let reason = granted.first(where: { !$0.isSuccess }) {
                    refusedFilters[filter] = reason
                    logger.error("The MQTT broker refused a subscription; nothing published there reaches Herald.", metadata: [
                        "filter": "\(filter)", "reason": "\(reason)", "client_id": "\(options.clientID)",
                    ])
                } else {
                    refusedFilters[filter] = nil
                }
                let refused = refusedFilters.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value))" }
                hooks.onProblem(refused.isEmpty ? nil : "the broker refused the subscription to \(refused.joined(separator: ", "))")
            })
    }

    private func sleep(seconds: Double) {
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        while !shutdown.isTriggered, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
}
