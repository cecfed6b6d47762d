import Foundation
import Histogram

/// The run's figures as JSON lines (`--json FILE`, appended to), so that several runs of one `make bench`
/// land in one file and `Tests/Tools/plot_bench.py` can draw them for docs/benchmarks.md. Each line is
/// one measurement with the run's context (store, chat size, message count, durability, cores).
struct FigureLog {
    let path: String?
    let context: [String: any Sendable]

    init(path: String?, workload: Workload) {
        self.path = path
        context = ["store": workload.postgres == nil ? "sqlite" : "postgres", "members": workload.members,
                   "messages": workload.messages, "durability": workload.durability, "cores": ProcessInfo.processInfo.activeProcessorCount,
                   "mqtt_sinks": workload.splitSinks ? 2 : 1]
    }

    /// A throughput phase: `subject` (herald, mosquitto_sub, …) in `phase` (live, backlog, …).
    func phase(_ phase: String, subject: String, _ result: PhaseResult) {
        var fields: [String: any Sendable] = ["kind": "throughput", "phase": phase, "subject": subject, "rate": result.rate]
        fields["cpu_s_per_1000"] = result.cpuPerThousand
        fields["rss_anon_mib"] = result.peakRssAnonMiB
        fields["rss_mib"] = result.peakRSSMiB
        fields["database_cpu_s_per_1000"] = result.databaseCPUPerThousand
        fields["broker_cpu_s_per_1000"] = result.cpuSplit?.broker
        fields["bench_cpu_s_per_1000"] = result.cpuSplit?.publisher
        write(fields)
    }

    /// N instances on one PostgreSQL store.
    func scaleOut(_ result: ScaleOutResult) {
        write(["kind": "scale_out", "instances": result.instances, "rate": result.rate, "cpu_s_per_1000": result.cpuPerThousand,
               "database_cpu_s_per_1000": result.databaseCPUPerThousand])
    }

    /// A latency phase at `rate` msg/s.
    func latency(rate: Double, _ result: LatencyResult) {
        func milliseconds(_ histogram: Histogram<UInt64>, _ percentile: Double) -> Double {
            Double(histogram.valueAtPercentile(percentile)) / 1000
        }
        var fields: [String: any Sendable] = [
            "kind": "latency", "rate": rate, "sink_delivering": result.notification != nil,
            "commit_p50_ms": Double(result.commit.valueAtPercentile(50)), "commit_p99_ms": Double(result.commit.valueAtPercentile(99)),
            "broker_p50_ms": milliseconds(result.broker, 50), "broker_p99_ms": milliseconds(result.broker, 99),
            "cpu_s_per_1000": result.cpuPerThousand,
        ]
        if let notification = result.notification {
            fields["notification_p50_ms"] = milliseconds(notification, 50)
            fields["notification_p99_ms"] = milliseconds(notification, 99)
        }
        write(fields)
    }

    /// The HTTP source under wrk.
    func http(_ phase: String, _ result: HTTPPhaseResult) {
        write(["kind": "throughput", "phase": phase, "subject": "herald-http", "rate": result.eventsPerSecond,
               "requests_per_second": result.requestsPerSecond, "refused": result.refused, "p50_ms": result.p50Milliseconds,
               "p99_ms": result.p99Milliseconds, "cpu_s_per_1000": result.cpuPerThousand])
    }

    /// The in-process store ceiling.
    func router(_ result: RouterPhaseResult) {
        var fields: [String: any Sendable] = ["kind": "router", "normalise_rate": result.normalise, "commit_rate": result.commit,
                                              "cpu_s_per_1000": result.commitCPUPerThousand]
        if let database = result.databaseCPUPerThousand { fields["database_cpu_s_per_1000"] = database }
        write(fields)
    }

    private func write(_ fields: [String: any Sendable]) {
        guard let path else { return }
        let line = context.merging(fields) { _, new in new }
        guard let data = try? JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]) else { return }
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
        }
        guard let handle = FileHandle(forWritingAtPath: path) else { return }
        handle.seekToEndOfFile()
        handle.write(data + Data("\n".utf8))
        try? handle.close()
    }
}
