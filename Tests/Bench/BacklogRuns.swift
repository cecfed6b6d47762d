import HeraldTestKit

/// Backlog drains of `mosquitto_sub` and of Herald, taken in turn several times. One drain on a shared host
/// moves by 20–40% from run to run, and the two subjects of a ratio do not move together; so the ratio is
/// taken between the two medians, and every run's rate is printed beside it.
///
/// Herald drains each backlog twice in a turn: with its MQTT sink publishing every output meanwhile, as
/// the shipped config runs, and with the sink down (outputs queued), which is intake alone.
struct BacklogRuns {
    /// `mosquitto_sub`'s drains, in the order they ran.
    var baseline: [PhaseResult] = []
    /// Herald's drains with outputs queued, each right after one of `mosquitto_sub`'s.
    var herald: [PhaseResult] = []
    /// Herald's drains with the sink delivering, each right after one with outputs queued.
    var delivering: [PhaseResult] = []
    /// Messages in each backlog.
    var messages = 0

    /// Drains the same backlog `runs` times with each subject, `mosquitto_sub` first in each turn.
    static func measure(_ workload: Workload, runs: Int, directory: TemporaryDirectory,
                        step: (String) -> Void) async throws -> BacklogRuns {
        var result = BacklogRuns(messages: workload.messages)
        for run in 1...max(1, runs) {
            let turn = runs > 1 ? " (\(run) of \(runs))" : ""
            step("mosquitto_sub backlog\(turn)")
            result.baseline.append(try await mosquittoSubPhase(workload, backlog: true, directory: directory))
            step("Herald backlog, outputs queued\(turn)")
            result.herald.append(try await heraldPhase(workload, backlog: true, directory: directory))
            step("Herald backlog, the sink delivering\(turn)")
            result.delivering.append(try await heraldPhase(workload, backlog: true, sinkDelivers: true, directory: directory))
        }
        return result
    }

    /// `mosquitto_sub`'s drain at the median rate.
    var baselineMedian: PhaseResult { Self.median(baseline) }

    /// Herald's drain with outputs queued at the median rate, with the highest memory peaks of all
    /// those drains: the memory target is a ceiling, so no run's peak is left out.
    var heraldMedian: PhaseResult { Self.medianWithPeaks(herald) }

    /// Herald's drain with the sink delivering at the median rate, with the highest memory peaks.
    var deliveringMedian: PhaseResult { Self.medianWithPeaks(delivering) }

    /// Every run's rate, in turn: `mosquitto_sub 105892, 98310, 101442 msg/s; Herald, the sink delivering 38662, …`.
    var summary: String {
        "backlog runs in turn (medians compared): mosquitto_sub \(Self.rates(baseline)) msg/s; Herald, the sink delivering "
            + "\(Self.rates(delivering)) msg/s; Herald, outputs queued \(Self.rates(herald)) msg/s"
    }

    /// What the sink had left when the last message was stored, and when the outbox was empty (every
    /// output delivered, then purged: the dispatcher purges within 250 ms), in the median drain with the
    /// sink delivering.
    var deliverySummary: String {
        let median = deliveringMedian
        guard let queued = median.outputsQueuedAtLastCommit, let empty = median.outboxEmptyAfterSeconds else { return "delivery not measured" }
        return "with the sink delivering (median drain): the last message stored after \(format(Double(messages) / median.rate, 1)) s "
            + "with \(format(Double(queued))) outputs still queued, the outbox empty after \(format(empty, 1)) s"
    }

    /// Where the median drains' CPU went, and the drain rate the cores could carry at each cost: Herald's
    /// drains share the two cores with the broker that sends the backlog (and, with the sink delivering,
    /// takes the outputs), so this caps the backlog ratio whatever the writer does.
    var cpuRows: String {
        guard let withSub = baselineMedian.cpuSplit else { return "backlog CPU: not measured" }
        let server = deliveringMedian.cpuSplit?.database == nil ? "" : " / PostgreSQL"
        var rows = ["backlog CPU, s/1000 msgs (broker / this bench, its polls of the store / consumer\(server)), \(CPUSplit.cores) cores, median drains:",
                    "  with mosquitto_sub               \(withSub.figures), the cores \(Self.busy(baselineMedian)) busy: "
                        + "at this cost they carry at most \(format(withSub.ceiling)) msg/s"]
        for (label, drain) in [("with Herald, the sink delivering", deliveringMedian), ("with Herald, outputs queued     ", heraldMedian)] {
            guard let split = drain.cpuSplit else { continue }
            rows.append("  \(label) \(split.figures), the cores \(Self.busy(drain)) busy: at most \(format(split.ceiling)) msg/s, "
                        + "\(format(split.ceiling / baselineMedian.rate, 2)) of mosquitto_sub's backlog rate (the CPU's cap on the backlog ratio)")
        }
        return rows.joined(separator: "\n")
    }

    /// How busy a drain kept the cores: its CPU over its wall-clock time, as a share of every core.
    private static func busy(_ drain: PhaseResult) -> String {
        guard let split = drain.cpuSplit else { return "?" }
        return "\(format(split.busy(atRate: drain.rate) * 100))%"
    }

    private static func medianWithPeaks(_ runs: [PhaseResult]) -> PhaseResult {
        var median = Self.median(runs)
        median.peakRssAnonMiB = runs.compactMap(\.peakRssAnonMiB).max()
        median.peakRSSMiB = runs.compactMap(\.peakRSSMiB).max()
        return median
    }

    private static func rates(_ runs: [PhaseResult]) -> String {
        runs.map { format($0.rate) }.joined(separator: ", ")
    }

    /// The run at the median rate (the upper middle one of an even count).
    static func median(_ runs: [PhaseResult]) -> PhaseResult {
        let sorted = runs.sorted { $0.rate < $1.rate }
        return sorted[sorted.count / 2]
    }
}
