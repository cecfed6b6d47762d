import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import MQTTAdapter

#if canImport(Glibc)
import Glibc
#endif

/// Load shape: ~150-byte messages across many chats and users.
struct Workload {
    var messages: Int
    var chats = 1000
    var users = 2000
    /// Members per chat: each chat has its own fixed group; senders take turns, everyone else receives.
    var members = 4
    /// Records per commit in the in-process phase (the MQTT source's `max_batch` default).
    var batch = MQTTSourceConfiguration.defaultMaxBatch
    /// Store durability of the Herald phases (`full` or `normal`).
    var durability = "full"
    /// The writer's page cache in MiB, or Herald's default.
    var cacheMiB: Int?
    /// The MQTT source's `max_batch` in the Herald phases, or Herald's default.
    var maxBatch: Int?
    /// The MQTT source's `commit_interval_ms` in the Herald phases, or Herald's default.
    var commitIntervalMilliseconds: Int?
    /// The PostgreSQL cluster the Herald live and backlog phases store into (`--store postgres`); SQLite when `nil`.
    var postgres: PostgresCluster?
    /// How long a latency phase publishes (`--latency-seconds`), or ten seconds within the limits below.
    var latencySeconds: Int?
    /// Notifications and live messages through one MQTT sink, badges and receipts through another
    /// (`--split-sinks`), instead of the shipped config's one sink for every output.
    var splitSinks = false

    /// A latency phase's load at `rate` msg/s: ten seconds of it (at least 1,000 messages), at most a
    /// quarter of the messages and at most 50,000; or exactly `latencySeconds` of it.
    func forLatency(rate: Double) -> Workload {
        var load = self
        if let latencySeconds {
            load.messages = max(1, Int(rate * Double(latencySeconds)))
        } else {
            load.messages = min(messages / 4, 50_000, max(1000, Int(rate * 10)))
        }
        return load
    }

    func topic(_ index: Int) -> String { "chats/c\(index % chats)/messages" }

    /// A message whose body starts with the publish time in microseconds (read back from previews).
    func payload(_ index: Int, sentAtMicros: Int64) -> String {
        let chat = index % chats
        let group = (0..<members).map { (chat * members + $0) % users }
        let sender = group[(index / chats) % members]
        let recipients = group.filter { $0 != sender }.map { "\"u\($0)\"" }.joined(separator: ",")
        let body = "t=\(sentAtMicros) lorem ipsum dolor sit amet consectetur"
        return #"{"id":"m\#(index)","from":"u\#(sender)","to":[\#(recipients)],"body":"\#(body)","sent_at":\#(sentAtMicros / 1000)}"#
    }
}

extension Workload {
    /// A Herald config for a bench phase on the broker at `port`: this workload's durability and cache,
    /// and, unless `sinkDelivers`, the MQTT sink pointed at a port where nothing listens, so outputs
    /// stay queued and only intake is measured.
    func configuration(port: Int, storePath: String, sinkDelivers: Bool = false) throws -> TestConfiguration {
        var configuration = TestConfiguration(port: port, storePath: storePath)
        configuration.durability = durability
        configuration.cacheMiB = cacheMiB
        if !sinkDelivers { configuration.sinkPort = try Loopback.freePort() }
        configuration.sourceClientID = "herald-bench"
        configuration.sourceExtra = sourceOptions.joined(separator: "\n")
        configuration.splitSinks = splitSinks
        return configuration
    }

    /// The MQTT connections Herald makes: the source's, and each sink's when the sinks have a broker.
    func connections(sinkDelivers: Bool) -> Int {
        sinkDelivers ? (splitSinks ? 3 : 2) : 1
    }
}

extension Workload {
    /// The MQTT source's options this run sets (`--max-batch`, `--commit-interval-ms`), as YAML lines.
    var sourceOptions: [String] {
        (maxBatch.map { ["    max_batch: \($0)"] } ?? []) + (commitIntervalMilliseconds.map { ["    commit_interval_ms: \($0)"] } ?? [])
    }
}

/// Microseconds since the epoch.
func nowMicros() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_REALTIME, &time)
    return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1000
}

/// CPU seconds (user + system) and peak RSS of a process, from /proc.
struct ProcessStats {
    var cpuSeconds: Double
    /// The part of ``cpuSeconds`` spent in the kernel on the process's behalf (system calls, page faults).
    var systemSeconds: Double
    var peakRSSMiB: Double
    /// Read- and write-type system calls so far (`syscr`, `syscw` of `/proc/PID/io`: sockets, files,
    /// the wake-up descriptors), or zero where that file cannot be read.
    var readCalls: Double
    var writeCalls: Double

    /// A process that has not run yet: what a phase that starts Herald measures from.
    static let start = ProcessStats(cpuSeconds: 0, systemSeconds: 0, peakRSSMiB: 0, readCalls: 0, writeCalls: 0)

    private init(cpuSeconds: Double, systemSeconds: Double, peakRSSMiB: Double, readCalls: Double, writeCalls: Double) {
        (self.cpuSeconds, self.systemSeconds, self.peakRSSMiB) = (cpuSeconds, systemSeconds, peakRSSMiB)
        (self.readCalls, self.writeCalls) = (readCalls, writeCalls)
    }

    init(pid: Int32) {
        let entry = ProcessTable.entry(pid)
        cpuSeconds = entry?.ownSeconds ?? 0
        systemSeconds = entry?.systemSeconds ?? 0
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let hwm = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }?.split(separator: " ").dropFirst().first
        peakRSSMiB = (hwm.flatMap { Double($0) } ?? 0) / 1024
        let io = (try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Double {
            io.split(separator: "\n").first { $0.hasPrefix(name + ":") }.flatMap { Double($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)) } ?? 0
        }
        readCalls = field("syscr")
        writeCalls = field("syscw")
    }

    /// What the process spent between `earlier` and this sample, per message: the kernel's share of its
    /// CPU and its read and write system calls, as one line's clause.
    func kernelClause(since earlier: ProcessStats, messages: Int) -> String {
        let cpu = cpuSeconds - earlier.cpuSeconds, perMessage = 1 / Double(max(1, messages))
        let share = cpu > 0 ? (systemSeconds - earlier.systemSeconds) / cpu * 100 : 0
        return "\(format(share))% in the kernel; \(format((readCalls - earlier.readCalls) * perMessage, 1)) read and "
            + "\(format((writeCalls - earlier.writeCalls) * perMessage, 1)) write system calls a message"
    }
}

/// Publishes `workload` through a real libmosquitto client and waits for PUBACKs. Paced, each message
/// leaves at its own due time (`offset / rate` after the start, at most a millisecond early), so the
/// load is even rather than bursts.
func publish(_ workload: Workload, port: Int, range: Range<Int>? = nil, ratePerSecond: Double? = nil) async throws {
    let client = try await TestMQTTClient(port: port, clientID: "bench-pub-\(UUID().uuidString.prefix(6))", maxInflight: 1000)
    let indices = range ?? 0..<workload.messages
    let start = ContinuousClock.now
    for (offset, index) in indices.enumerated() {
        if let ratePerSecond {
            // Sleeps only when a millisecond or more ahead: a sleep per message at thousands per second
            // would take the publisher's CPU from the processes measured.
            let due = start + .microseconds(Int64(Double(offset) / ratePerSecond * 1_000_000))
            if due > .now + .milliseconds(1) { try await Task.sleep(until: due, clock: .continuous) }
        }
        try client.publish(workload.topic(index), workload.payload(index, sentAtMicros: nowMicros()))
        if offset % 5000 == 4999 { await Task.yield() }
    }
    try await client.waitForAcknowledgements(indices.count, timeout: .seconds(600))
    try await client.close()
}

/// Waits until Herald has committed every message of `workload`, polling every 20 ms.
///
/// Sources commit in arrival order and the workload arrives in index order, so the poll looks up only
/// the last message (one primary-key lookup); the store's message count then confirms it, and the wait
/// goes on in the rare case that an earlier message is still missing. A Herald of `heralds` that exits
/// meanwhile (a config it refuses, a store it cannot open) ends the wait with its output.
func waitUntilCommitted(_ workload: Workload, by heralds: [HeraldProcess], store: () throws -> (any ChatStoreInspection)?,
                        timeout: Duration = .seconds(900)) async throws {
    let last = workload.messages - 1
    let chat = ChatID("c\(last % workload.chats)"), id = MessageID("m\(last)")
    try await eventually("herald to commit \(workload.messages)", timeout: timeout, poll: .milliseconds(20)) {
        for herald in heralds where !herald.child.isRunning {
            throw TestKitError("herald exited before committing \(workload.messages) messages:\n\(herald.child.output)")
        }
        guard let store = try store(), (try? store.containsMessage(chat: chat, id: id)) == true else { return false }
        return try store.statistics().messages >= workload.messages
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func format(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }
