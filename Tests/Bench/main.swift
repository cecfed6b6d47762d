import Foundation
import HeraldTestKit
import Histogram
import MQTTAdapter

// herald-bench: throughput and latency of Herald against the C client on the same machine, same run.
// Never a pass/fail test: it prints figures, ratios and the targets they are compared with.

// The phases run in a task while the main thread waits for it: an async main hands the main thread to
// dispatch_main, which valgrind 3.19 cannot run, and Tests/Tools/count_instructions.py runs this binary under callgrind.
let finished = DispatchSemaphore(value: 0)
Task.detached {
    do {
        try await benchMain()
    } catch {
        FileHandle.standardError.write(Data("herald-bench: \(error)\n".utf8))
        exit(1)
    }
    finished.signal()
}
finished.wait()

/// Every phase the arguments ask for, in order; ends the process when done.
func benchMain() async throws {
    let arguments = CommandLine.arguments
    func option(_ name: String) -> String? { arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil } }
    if arguments.contains("--help") {
        print("""
            USAGE: herald-bench [--herald PATH] [--messages N] [--members N] [--durability full|normal] [--cache-mib N] [--max-batch N] [--commit-interval-ms N] [--split-sinks] [--batch N]
                                [--router-only] [--herald-only [--with-baseline]] [--backlog-runs N] [--upstream-only] [--store postgres [--icu-locale L]]
                                [--consumers-only] [--sink-only] [--live-only] [--http-only] [--latency-only RATES [--latency-seconds N]] [--json FILE]
                                [--scale-out --store postgres] [--soak MINUTES [--rate R]]

            Publishes N (default 200000) ~150-byte QoS 1 messages over 1000 chats of --members users each (default 2:
            direct chats; 5 is a group of 4 recipients a message) drawn from 2000 users to local mosquitto
            brokers and measures, in one run: mosquitto_sub -C N draining them live and from a backlog (the C-client
            limit); a plain Python bridge (Tests/Bench/python_bridge.py: paho-mqtt and sqlite3, batched commits, acks
            after commit) draining the same backlog; Herald committing them live and from a backlog queued in its
            persistent session (msgs/s, CPU seconds per 1000 messages, peak RssAnon and RSS; the two backlog drains run
            in turn --backlog-runs times, and their medians are compared); and latency under an even load, after a one-second
            warm-up at that rate (reported apart), next to a plain C-client subscriber on the same broker (the
            baseline): publish→commit at half of Herald's live rate with outputs queued (as in the throughput
            phases), and publish→commit and publish→notification with the sink delivering every output at 200 and
            2,000 msg/s and at a quarter and a half of the live rate; and how fast
            the MQTT sink publishes the outputs that queued during an outage (outputs/s, CPU per 1000). Also: intake
            with a slow webhook receiver (50 ms per request) next to intake without it; a local WebSocket server
            pushing N messages and a REST server paging them 500 at a time, each next to the MQTT figures of the
            same run.

              --herald PATH        the herald to measure (default: the one beside this binary)
              --cache-mib N        the writer's page cache (store.cache_mib; default: Herald's)
              --max-batch N        the MQTT source's max_batch in the Herald phases (default: Herald's)
              --commit-interval-ms N  the MQTT source's commit_interval_ms in the Herald phases (default: Herald's)
              --split-sinks        two MQTT sinks on the broker, each its own connection and outbox stream: notifications
                           and live messages through one, badges and read receipts through the other (the shipped
                           config has one sink for every output)
              --batch N            records per commit in the in-process phase (default: --max-batch, else the MQTT source's default max_batch, \(MQTTSourceConfiguration.defaultMaxBatch))
              --router-only        only the in-process phase (normalise, route + commit and its CPU per 1000; with
                                   --store postgres into PostgreSQL, with the server's CPU beside it)
              --herald-only        only Herald's MQTT live and backlog phases, for quick A/B runs
              --with-baseline      with --herald-only: also mosquitto_sub's backlog drain and, with SQLite, the Python
                                   bridge's, and the ratios; the backlog is then drained --backlog-runs times by each
              --backlog-runs N     where a backlog ratio is printed: drain the backlog N times (default 3) with
                                   mosquitto_sub and with Herald in turn, and compare the medians
              --store postgres     Herald's live, backlog and latency phases store into PostgreSQL (a cluster with
                                   fsync on, started for the run) instead of SQLite; the live and backlog lines add
                                   the server's CPU per 1000
              --icu-locale L       with --store postgres: the databases' default collation is ICU's L (en-US, as on many
                                   production servers) instead of the cluster's C.UTF-8
              --upstream-only      only the WebSocket and REST phases, for quick A/B runs
              --consumers-only     only intake alone, with a stalled tail client and with a slow webhook
              --sink-only          only the sink drain after an outage, for quick A/B runs
              --live-only          only mosquitto_sub and Herald live, with where each run's CPU went
              --http-only          only the HTTP source under wrk (single-event requests, 100-event batches) beside
                                   Herald's MQTT live rate
              --scale-out          with --store postgres: 1, 2 and 3 instances on one database behind an MQTT 5 shared
                                   subscription, live, with each instance's CPU and the database's, beside mosquitto_sub live
              --soak MINUTES       a long run at half the live rate (or --rate R) with the sink delivering and a kill -9 every
                                   2–4 minutes; prints RssAnon, RSS and open files over time, whether they stay flat,
                                   and whether every invariant held afterwards (make soak: 30 minutes); with
                                   --store postgres into PostgreSQL
              --latency-only RATES only the latency phases (outputs queued, then the sink delivering), publishing
                                   evenly at each of the comma-separated RATES msg/s
              --latency-seconds N  each latency phase publishes for N seconds (default 10, within a quarter of
                                   --messages and 50,000 messages): long enough, with --store postgres, to
                                   include the outbox's vacuums and autovacuum's visits
              --json FILE          also append every figure to FILE as a JSON line (Tests/Tools/plot_bench.py draws them)
            """)
        exit(0)
    }
    if let path = option("--herald") {
        setenv("HERALD_BINARY", path, 1)
    } else if ProcessInfo.processInfo.environment["HERALD_BINARY"] == nil {
        // Measure the release build beside this binary, never a debug build by accident.
        let sibling = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("herald").path
        if FileManager.default.isExecutableFile(atPath: sibling) { setenv("HERALD_BINARY", sibling, 1) }
    }
    var workload = Workload(messages: Int(option("--messages") ?? "") ?? 200_000)
    workload.members = Int(option("--members") ?? "") ?? 2
    workload.durability = option("--durability") ?? "full"
    workload.cacheMiB = option("--cache-mib").flatMap { Int($0) }
    workload.maxBatch = option("--max-batch").flatMap { Int($0) }
    workload.commitIntervalMilliseconds = option("--commit-interval-ms").flatMap { Int($0) }
    workload.latencySeconds = option("--latency-seconds").flatMap { Int($0) }
    workload.splitSinks = arguments.contains("--split-sinks")
    if option("--store") == "postgres" {
        // A durable cluster (fsync and synchronous_commit on), as a user's server runs.
        workload.postgres = try await PostgresCluster(durable: true, icuLocale: option("--icu-locale"))
    }
    workload.batch = max(1, Int(option("--batch") ?? "") ?? workload.maxBatch ?? workload.batch)
    let backlogRuns = max(1, Int(option("--backlog-runs") ?? "") ?? 3)
    let durability = workload.durability
    let figures = FigureLog(path: option("--json"), workload: workload)
    let directory = try TemporaryDirectory(prefix: "herald-bench")
    /// Removes the run's stores and logs, then exits. A top-level value is never deinitialised, so the
    /// directory would otherwise stay behind (hundreds of MB after a full run).
    func finish() -> Never {
        try? FileManager.default.removeItem(at: directory.url)
        exit(0)
    }

    func step(_ text: String) { FileHandle.standardOutput.write(Data("… \(text)\n".utf8)) }

    step("router only (in-process, batches of \(workload.batch))")
    let routerOnly = try await routerPhase(workload, directory: directory)
    figures.router(routerOnly)
    print("   normalise \(format(routerOnly.normalise)) msg/s, route+commit \(format(routerOnly.commit)) msg/s "
          + "(CPU \(format(routerOnly.commitCPUPerThousand, 3)) s/1000"
          + (routerOnly.databaseCPUPerThousand.map { ", the database's \(format($0, 3)) s/1000" } ?? "") + ")")
    if arguments.contains("--router-only") { finish() }
    if let rates = option("--latency-only")?.split(separator: ",").compactMap({ Double($0) }), !rates.isEmpty {
        // A quick look at latency alone, at the given publish rates.
        for rate in rates {
            let load = workload.forLatency(rate: rate)
            for deliver in [false, true] {
                step("latency at \(format(rate)) msg/s, \(load.messages) messages, " + (deliver ? "the sink delivering" : "outputs queued"))
                let result = try await latencyPhase(load, rate: rate, deliver: deliver, directory: directory)
                figures.latency(rate: rate, result)
                print(latencyReport(result, rate: rate, messages: load.messages))
            }
        }
        finish()
    }
    if arguments.contains("--herald-only") {
        // A quick A/B of Herald's MQTT intake alone (no mosquitto_sub, tail, webhook, upstream or latency phases).
        step("Herald live")
        let live = try await heraldPhase(workload, backlog: false, directory: directory)
        var runs: BacklogRuns?
        let backlog: PhaseResult
        if arguments.contains("--with-baseline") {
            let measured = try await BacklogRuns.measure(workload, runs: backlogRuns, directory: directory, step: step)
            runs = measured
            backlog = measured.heraldMedian
        } else {
            step("Herald backlog")
            backlog = try await heraldPhase(workload, backlog: true, directory: directory)
        }
        figures.phase("live", subject: "herald", live)
        figures.phase("backlog", subject: "herald", backlog)
        func database(_ phase: PhaseResult) -> String { phase.databaseCPUPerThousand.map { ", PostgreSQL CPU \(format($0, 3)) s/1000" } ?? "" }
        print("store: \(workload.postgres == nil ? "SQLite" : "PostgreSQL (fsync on)")")
        func memory(_ phase: PhaseResult) -> String {
            "RssAnon \(format(phase.peakRssAnonMiB ?? 0, 1)) MiB, RSS \(format(phase.peakRSSMiB ?? 0, 1)) MiB"
        }
        print("live \(format(live.rate)) msg/s (CPU \(format(live.cpuPerThousand ?? 0, 3)) s/1000\(database(live)), \(memory(live)))   "
              + "backlog\(runs.map { $0.herald.count > 1 ? " (median of \($0.herald.count))" : "" } ?? "") \(format(backlog.rate)) msg/s (CPU \(format(backlog.cpuPerThousand ?? 0, 3)) s/1000\(database(backlog)), \(memory(backlog)))")
        print("  Herald's commits, live: \(live.commits?.summary ?? "not read")   backlog: \(backlog.commits?.summary ?? "not read")")
        print("  Herald's CPU, live: \(live.kernel ?? "not read")   backlog: \(backlog.kernel ?? "not read")")
        if let runs {
            let baseline = runs.baselineMedian, delivering = runs.deliveringMedian
            figures.phase("backlog", subject: "mosquitto_sub", baseline)
            figures.phase("backlog-delivering", subject: "herald", delivering)
            print("backlog, the sink delivering (median of \(runs.delivering.count)) \(format(delivering.rate)) msg/s "
                  + "(CPU \(format(delivering.cpuPerThousand ?? 0, 3)) s/1000\(database(delivering)), \(memory(delivering)))")
            print("  Herald's commits, the sink delivering: \(delivering.commits?.summary ?? "not read")   CPU: \(delivering.kernel ?? "not read")")
            print("mosquitto_sub backlog \(format(baseline.rate)) msg/s; Herald backlog / mosquitto_sub = "
                  + "\(format(delivering.rate / baseline.rate, 2)) with the sink delivering, \(format(backlog.rate / baseline.rate, 2)) with outputs queued")
            print("  \(runs.summary)")
            print("  \(runs.deliverySummary)")
            print(runs.cpuRows)
            if workload.postgres == nil {
                step("Python bridge backlog (paho-mqtt + sqlite3)")
                let python = try await pythonBridgePhase(workload, directory: directory)
                figures.phase("backlog", subject: "python-bridge", python)
                print(pythonRow(herald: delivering, python: python) + " (the sink delivering)")
                print(pythonRow(herald: backlog, python: python) + " (outputs queued)")
            }
        }
        finish()
    }
    if let minutes = option("--soak").flatMap(Double.init) {
        // Not a throughput figure: a long run at half the live rate with crashes, watching the footprint.
        let rate: Double
        if let given = option("--rate").flatMap(Double.init) {
            rate = given
        } else {
            step("Herald live (to find half of its rate)")
            var probe = workload
            probe.messages = min(workload.messages, 50_000)
            rate = try await heraldPhase(probe, backlog: false, directory: directory).rate / 2
        }
        step("soak for \(format(minutes)) min at \(format(rate)) msg/s")
        print(try await soakPhase(workload, minutes: minutes, rate: rate, directory: directory, step: step))
        finish()
    }
    if arguments.contains("--scale-out") {
        // 1, 2 and 3 instances on one PostgreSQL behind a shared subscription, beside mosquitto_sub live.
        step("mosquitto_sub live (\(workload.messages) messages)")
        let baseline = try await mosquittoSubPhase(workload, backlog: false, directory: directory)
        figures.phase("live", subject: "mosquitto_sub", baseline)
        var lines: [String] = []
        for instances in 1...3 {
            step("\(instances) instance(s) on one PostgreSQL, shared subscription, live")
            let result = try await scaleOutPhase(workload, instances: instances, directory: directory)
            figures.scaleOut(result)
            lines.append(result.report(baseline: baseline.rate))
        }
        print("scale-out (PostgreSQL with fsync on, \(CPUSplit.cores) cores, mosquitto_sub live \(format(baseline.rate)) msg/s):")
        print(lines.joined(separator: "\n"))
        finish()
    }
    if arguments.contains("--sink-only") {
        step("sink drain: \(workload.messages) messages' outputs queued during an outage, then delivered")
        print(try await sinkDrainPhase(workload, directory: directory).report)
        finish()
    }
    if arguments.contains("--consumers-only") {
        // A quick A/B of intake with slow consumers, next to intake alone.
        print(try await ConsumerRuns.measure(workload, directory: directory, step: step).report)
        finish()
    }
    /// The HTTP source under wrk, single events and batches of 100, each as a line.
    func httpRuns() async throws -> [(name: String, result: HTTPPhaseResult)] {
        var runs: [(name: String, result: HTTPPhaseResult)] = []
        for (name, size) in [("single-event requests", 1), ("100-event batches", 100)] {
            step("HTTP: wrk posts \(name) for 10 s, 32 connections")
            let result = try await httpPhase(workload, eventsPerRequest: size, directory: directory)
            figures.http(size == 1 ? "http-single" : "http-batch100", result)
            runs.append((name, result))
        }
        return runs
    }
    if arguments.contains("--http-only") {
        step("Herald live (MQTT)")
        let live = try await heraldPhase(workload, backlog: false, directory: directory)
        figures.phase("live", subject: "herald", live)
        for run in try await httpRuns() {
            print("HTTP \(run.name.padding(toLength: 22, withPad: " ", startingAt: 0)) \(run.result.report); "
                  + "\(format(run.result.eventsPerSecond / live.rate, 2))× Herald's MQTT live rate (\(format(live.rate)) msg/s)")
        }
        finish()
    }
    if arguments.contains("--upstream-only") {
        // A quick A/B of the WebSocket and REST sources alone.
        for (name, mode) in [("WebSocket", ChatServer.Mode.ws), ("REST", ChatServer.Mode.rest)] {
            step("\(name): a local server serves \(workload.messages) messages")
            let result = try await upstreamPhase(workload, mode: mode, directory: directory)
            print("\(name) \(format(result.rate)) msg/s (CPU \(format(result.cpuPerThousand ?? 0, 3)) s/1000, RSS \(format(result.peakRSSMiB ?? 0, 1)) MiB)")
        }
        finish()
    }
    step("mosquitto_sub live (\(workload.messages) messages)")
    let subLive = try await mosquittoSubPhase(workload, backlog: false, directory: directory)
    if arguments.contains("--live-only") {
        // A quick look at the live case alone: both rates, and where the two runs' CPU went.
        step("Herald live")
        let live = try await heraldPhase(workload, backlog: false, directory: directory)
        print(row("live", live, subLive, target: 0.9))
        print(liveCPURows(herald: live, sub: subLive))
        finish()
    }
    step("Python bridge backlog (paho-mqtt + sqlite3)")
    let pythonBacklog = try await pythonBridgePhase(workload, directory: directory)
    step("Herald live")
    let heraldLive = try await heraldPhase(workload, backlog: false, directory: directory)
    let backlogs = try await BacklogRuns.measure(workload, runs: backlogRuns, directory: directory, step: step)
    let subBacklog = backlogs.baselineMedian, heraldBacklog = backlogs.heraldMedian, deliveringBacklog = backlogs.deliveringMedian
    for (phase, subject, result) in [("live", "mosquitto_sub", subLive), ("backlog", "mosquitto_sub", subBacklog), ("backlog", "python-bridge", pythonBacklog),
                                     ("live", "herald", heraldLive), ("backlog", "herald", heraldBacklog),
                                     ("backlog-delivering", "herald", deliveringBacklog)] {
        figures.phase(phase, subject: subject, result)
    }
    let consumers = try await ConsumerRuns.measure(workload, directory: directory, step: step)
    step("sink drain: \(workload.messages) messages' outputs queued during an outage, then delivered")
    let sinkDrain = try await sinkDrainPhase(workload, directory: directory)
    step("WebSocket: a local server pushes \(workload.messages) messages")
    let webSocket = try await upstreamPhase(workload, mode: .ws, directory: directory)
    step("REST: a local server pages \(workload.messages) messages, 500 per page")
    let rest = try await upstreamPhase(workload, mode: .rest, directory: directory)
    let http = try await httpRuns()
    figures.phase("stream", subject: "herald-websocket", webSocket)
    figures.phase("pages", subject: "herald-rest", rest)
    let halfLive = heraldLive.rate / 2
    step("latency at \(format(halfLive)) msg/s (half of Herald's live rate), \(workload.forLatency(rate: halfLive).messages) messages, outputs queued")
    let latencyQueued = try await latencyPhase(workload.forLatency(rate: halfLive), rate: halfLive, deliver: false, directory: directory)
    figures.latency(rate: halfLive, latencyQueued)
    /// Publish→notification, the sink delivering every output: at fixed light and moderate rates, and at a
    /// quarter and a half of Herald's live rate.
    var latencies: [(rate: Double, result: LatencyResult)] = []
    for rate in [200, 2000, heraldLive.rate / 4, halfLive] {
        let load = workload.forLatency(rate: rate)
        step("latency at \(format(rate)) msg/s, \(load.messages) messages, the sink delivering every output")
        latencies.append((rate, try await latencyPhase(load, rate: rate, deliver: true, directory: directory)))
        figures.latency(rate: rate, latencies[latencies.count - 1].result)
    }

    func row(_ name: String, _ herald: PhaseResult, _ sub: PhaseResult, target: Double) -> String {
        let ratio = herald.rate / sub.rate
        return "\(name.padding(toLength: 8, withPad: " ", startingAt: 0)) Herald \(format(herald.rate).leftPad(7)) msg/s   "
            + "mosquitto_sub \(format(sub.rate).leftPad(7)) msg/s   ratio \(format(ratio, 2)) (target ≥ \(format(target, 1)))   "
            + "CPU \(format(herald.cpuPerThousand ?? 0, 3)) s/1000 msgs   peak RssAnon \(format(herald.peakRssAnonMiB ?? 0, 1)) MiB (target ≤ 32), "
            + "RSS \(format(herald.peakRSSMiB ?? 0, 1)) MiB"
    }

    /// Where the live phases' CPU went, and the live rate the cores could carry at Herald's cost.
    func liveCPURows(herald: PhaseResult, sub: PhaseResult) -> String {
        guard let withHerald = herald.cpuSplit, let withSub = sub.cpuSplit else { return "live CPU: not measured" }
        let ceiling = withHerald.ceiling
        return """
            live CPU, s/1000 msgs (broker / publisher, this bench / consumer\(withHerald.database == nil ? "" : " / PostgreSQL")), \(CPUSplit.cores) cores:
              with mosquitto_sub  \(withSub.figures): at this cost the cores carry at most \(format(withSub.ceiling)) msg/s
              with Herald         \(withHerald.figures): at most \(format(ceiling)) msg/s, \(format(ceiling / sub.rate, 2)) of mosquitto_sub's live rate (the CPU's cap on the live ratio)
            """
    }

    func upstreamRow(_ name: String, _ result: PhaseResult) -> String {
        "\(name.padding(toLength: 9, withPad: " ", startingAt: 0)) Herald \(format(result.rate).leftPad(7)) msg/s   vs MQTT backlog \(format(heraldBacklog.rate)) msg/s "
            + "(ratio \(format(result.rate / heraldBacklog.rate, 2)))   vs MQTT live \(format(heraldLive.rate)) msg/s   "
            + "CPU \(format(result.cpuPerThousand ?? 0, 3)) s/1000 msgs   peak RSS \(format(result.peakRSSMiB ?? 0, 1)) MiB"
    }


    print("""

        Herald benchmark — \(workload.messages) messages of ~150 bytes, QoS 1, 1000 chats of \(workload.members) members, 2000 users, store durability \(durability)
        in-process   normalise \(format(routerOnly.normalise)) msg/s   route+commit \(format(routerOnly.commit)) msg/s, CPU \(format(routerOnly.commitCPUPerThousand, 3)) s/1000 msgs (store ceiling, no broker)
        \(row("live", heraldLive, subLive, target: 0.9))
        \(liveCPURows(herald: heraldLive, sub: subLive))
        \(row("backlog", deliveringBacklog, subBacklog, target: 0.5)) (the sink delivering)
          \(backlogs.deliverySummary)
          \(pythonRow(herald: deliveringBacklog, python: pythonBacklog)) (the sink delivering)
        \(row("backlog", heraldBacklog, subBacklog, target: 0.5)) (outputs queued, the sink down)
          \(backlogs.summary)
          \(pythonRow(herald: heraldBacklog, python: pythonBacklog)) (outputs queued)
        \(backlogs.cpuRows)
          Herald's commits, live: \(heraldLive.commits?.summary ?? "not read"); backlog, outputs queued: \(heraldBacklog.commits?.summary ?? "not read"); the sink delivering: \(deliveringBacklog.commits?.summary ?? "not read")
          Herald's CPU, live: \(heraldLive.kernel ?? "not read"); backlog, outputs queued: \(heraldBacklog.kernel ?? "not read"); the sink delivering: \(deliveringBacklog.kernel ?? "not read")
          the store alone (in-process route+commit, no broker, no parsing) \(format(routerOnly.commit)) msg/s, \(format(routerOnly.commit / subBacklog.rate, 2)) of mosquitto_sub's backlog rate (the single writer's cap on the backlog ratio)
        \(consumers.report)
        \(sinkDrain.report)
        \(upstreamRow("WebSocket", webSocket))
        \(upstreamRow("REST", rest))
        \(http.map { "HTTP \($0.name): \($0.result.report); \(format($0.result.eventsPerSecond / heraldLive.rate, 2))× the MQTT live rate" }.joined(separator: "\n"))
        latency targets: publish→commit p99 ≤ 20 ms (SQLite) and ≤ 30 ms (PostgreSQL) at half the live rate; publish→notification
        p50 ≤ 5 ms and p99 ≤ 20 ms at 200 msg/s, p99 ≤ 50 ms at 2,000 msg/s, p99 within 2× the plain subscriber's at a quarter of the live rate
        \(latencyReport(latencyQueued, rate: halfLive, messages: workload.forLatency(rate: halfLive).messages))
        \(latencies.map { latencyReport($0.result, rate: $0.rate, messages: workload.forLatency(rate: $0.rate).messages) }.joined(separator: "\n"))
        """)
    finish()
}

extension String {
    func leftPad(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}

