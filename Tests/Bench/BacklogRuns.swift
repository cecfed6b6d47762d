import HeraldTestKit

/// Backlog drains of `mosquitto_sub` and of Herald, taken in turn several times. One drain on a shared host
/// moves by 20–40% from run to run, and the two subjects of a ratio do not move together; so the ratio is
/// taken between the two medians, and every run's rate is printed beside it.
struct BacklogRuns {
    /// `mosquitto_sub`'s drains, in the order they ran.
    var baseline: [PhaseResult] = []
    /// Herald's drains, each right after one of `mosquitto_sub`'s.
    var herald: [PhaseResult] = []

    /// Drains the same backlog `runs` times with each subject, `mosquitto_sub` first in each turn.
    static func measure(_ workload: Workload, runs: Int, directory: TemporaryDirectory,
                        step: (String) -> Void) async throws -> BacklogRuns {
        var result = BacklogRuns()
        for run in 1...max(1, runs) {
            let turn = runs > 1 ? " (\(run) of \(runs))" : ""
            step("mosquitto_sub backlog\(turn)")
            result.baseline.append(try await mosquittoSubPhase(workload, backlog: true, directory: directory))
            step("Herald backlog\(turn)")
            result.herald.append(try await heraldPhase(workload, backlog: true, directory: directory))
        }
        return result
    }

    /// `mosquitto_sub`'s drain at the median rate.
    var baselineMedian: PhaseResult { Self.median(baseline) }

    /// Herald's drain at the median rate, with the highest memory peaks of all its drains: the memory
    /// target is a ceiling, so no run's peak is left out.
    var heraldMedian: PhaseResult {
        var median = Self.median(herald)
        median.peakRssAnonMiB = herald.compactMap(\.peakRssAnonMiB).max()
        median.peakRSSMiB = herald.compactMap(\.peakRSSMiB).max()
        return median
    }

    /// Every run's rate, in turn: `mosquitto_sub 105,892, 98,310, 101,442 msg/s; Herald 50,931, …`.
    var summary: String {
        "backlog runs in turn (medians compared): mosquitto_sub \(Self.rates(baseline)) msg/s; Herald \(Self.rates(herald)) msg/s"
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
