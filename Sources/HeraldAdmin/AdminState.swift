import Foundation
import HeraldCore
import HeraldPluginAPI
import Synchronization

/// Samples the totals so `/v1/status` can report rates over the last minute.
final class AdminState: Sendable {
    private let parts: GatewayParts
    private let samples = Mutex<[(time: Timestamp, totals: IngestReport)]>([])

    init(parts: GatewayParts) {
        self.parts = parts
        samples.withLock { $0 = [(parts.clock.now(), parts.totals.snapshot())] }
    }

    /// Records a sample now and returns events per second over the last minute (or since start).
    func ratePerSecond() -> (applied: Double, deadLettered: Double) {
        let now = parts.clock.now()
        let totals = parts.totals.snapshot()
        return samples.withLock { samples in
            samples.append((now, totals))
            samples.removeAll { now.milliseconds - $0.time.milliseconds > 60_000 }
            guard let first = samples.first, now.milliseconds > first.time.milliseconds else { return (0, 0) }
            let seconds = Double(now.milliseconds - first.time.milliseconds) / 1000
            return (Double(totals.applied - first.totals.applied) / seconds, Double(totals.deadLettered - first.totals.deadLettered) / seconds)
        }
    }

    /// Readiness: the store takes a write, and each source is connected or within its reconnect budget.
    func readiness() -> (ready: Bool, body: [String: Any]) {
        var problems: [String] = []
        var storeState = "ok"
        do {
            try parts.store.checkWritable()
        } catch {
            storeState = "not writable: \(error)"
            problems.append("store \(storeState)")
        }
        if storeState == "ok", let failure = parts.commitHealth.failure {
            // The probe commits nothing; real commits can still fail (a full disk).
            let seconds = (parts.clock.now().milliseconds - failure.since.milliseconds) / 1000
            storeState = "commits failing for \(seconds) s: \(failure.reason)"
            problems.append("store \(storeState)")
        }
        let now = parts.clock.now()
        let budget = Int64(parts.configuration.admin.reconnectBudgetSeconds * 1000)
        var sources: [String: Any] = [:]
        for (name, health) in parts.sourceHealth {
            let snapshot = health.snapshot
            let down = now.milliseconds - snapshot.since.milliseconds
            var entry: [String: Any] = ["connected": snapshot.connected, "since": snapshot.since.milliseconds]
            if snapshot.standby {
                entry["standby"] = true
                sources[name] = entry
                continue
            }
            if let problem = snapshot.problem {
                entry["problem"] = problem
                problems.append("source \(name): \(problem)")
            }
            sources[name] = entry
            if !snapshot.connected, down >= budget {
                problems.append("source \(name) disconnected for \(down / 1000) s")
            }
        }
        return (problems.isEmpty, ["ready": problems.isEmpty, "store": storeState, "sources": sources, "not_ready": problems])
    }
}
