import Foundation
import HeraldCore
import HeraldTestKit
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One sample of the gateway's footprint.
struct SoakSample {
    var minute: Double
    var incarnation: Int
    var rssAnonMiB: Double
    var rssMiB: Double
    var openFiles: Int
}

/// `herald-bench --soak MINUTES`: the shipped shape (SQLite, or PostgreSQL with `--store postgres`; the MQTT
/// sink delivering every output to a subscriber) at `rate` msg/s for `minutes`, `kill -9` at a random moment
/// every 2–4 minutes and a restart; RssAnon, RSS and open descriptors sampled every 10 s. Afterwards the
/// invariants are checked: every message the broker acknowledged stored once, badges equal a recount, every
/// notification delivered at least once, the outbox empty.
func soakPhase(_ workload: Workload, minutes: Double, rate: Double, directory: TemporaryDirectory, step: (String) -> Void) async throws -> String {
    let broker = try await MosquittoBroker()
    var configuration = try workload.configuration(port: broker.port, storePath: directory.path("soak.sqlite"), sinkDelivers: true)
    configuration.storeURL = try await workload.postgres?.createDatabase()
    let configPath = try directory.write("soak.yaml", configuration.yaml)
    let notified = Mutex<Set<String>>([])
    let observer = try await TestMQTTClient(port: broker.port, subscriptions: ["users/+/notifications"], maxInflight: 1000) { received in
        if let id = received.text.firstMatch(of: /"message_id":"([^"]+)"/)?.1 { _ = notified.withLock { $0.insert(String(id)) } }
    }
    var incarnation = 1
    var herald = try HeraldProcess(configPath: configPath, logPath: directory.path("soak-1.log"))
    try await herald.waitUntilConnected(connections: workload.connections(sinkDelivers: true))
    let total = Int(minutes * 60 * rate)
    var load = workload
    load.messages = total
    let started = ContinuousClock.now
    let end = started + .milliseconds(Int64(minutes * 60_000))
    let publisher = Task { try await publish(load, port: broker.port, ratePerSecond: rate) }
    var samples: [SoakSample] = []
    var nextKill = started + .seconds(Int64.random(in: 120...240))
    var kills = 0
    while ContinuousClock.now < end {
        try await Task.sleep(for: .seconds(10))
        let minute = seconds(ContinuousClock.now - started) / 60
        if let memory = MemorySampler.sample(pid: herald.child.pid) {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(herald.child.pid)/fd").count) ?? -1
            samples.append(SoakSample(minute: minute, incarnation: incarnation, rssAnonMiB: memory.anonymous, rssMiB: memory.total, openFiles: files))
        }
        if ContinuousClock.now >= nextKill, ContinuousClock.now + .seconds(60) < end {
            try await herald.child.kill9()
            kills += 1
            incarnation += 1
            step(String(format: "minute %.1f: kill -9 number %d, restarting", minute, kills))
            herald = try HeraldProcess(configPath: configPath, logPath: directory.path("soak-\(incarnation).log"))
            try await herald.waitUntilConnected(connections: workload.connections(sinkDelivers: true))
            nextKill = .now + .seconds(Int64.random(in: 120...240))
        }
    }
    try await publisher.value
    let store = try inspection(of: configuration)
    try await eventually("every message stored", timeout: .seconds(300)) { try store.statistics().messages == total }
    try await eventually("the outbox drained", timeout: .seconds(300)) { try store.statistics().outbox == 0 }
    try await eventually("every notification delivered", timeout: .seconds(120)) { notified.withLock { $0.count } >= total }
    let recountHolds = try store.unreadAgainstRecount().allSatisfy { $0.stored == $0.recounted }
    herald.child.signal(SIGTERM)
    _ = try await herald.child.waitForExit()
    try await observer.close()
    return soakReport(samples, total: total, rate: rate, minutes: minutes, kills: kills, recountHolds: recountHolds,
                      notified: notified.withLock { $0.count }, store: workload.postgres == nil ? "SQLite" : "PostgreSQL")
}

/// Per incarnation that lived three minutes or more, its footprint one minute in against its last sample:
/// flat means RssAnon grew less than 10% and open descriptors by at most 2.
func soakReport(_ samples: [SoakSample], total: Int, rate: Double, minutes: Double, kills: Int, recountHolds: Bool, notified: Int,
                store: String) -> String {
    var lines = ["soak (\(store)): \(format(minutes)) min at \(format(rate)) msg/s, \(total) messages, \(kills) kill -9 with restart"]
    lines.append("  minute  incarnation  RssAnon MiB  RSS MiB  open files")
    for sample in samples where Int(sample.minute * 6) % 6 == 0 || sample.minute == samples.last?.minute {
        lines.append(String(format: "  %6.1f  %11d  %11.1f  %7.1f  %10d", sample.minute, sample.incarnation, sample.rssAnonMiB, sample.rssMiB, sample.openFiles))
    }
    var flat = true
    for incarnation in Set(samples.map(\.incarnation)).sorted() {
        let own = samples.filter { $0.incarnation == incarnation }
        guard let first = own.first, let last = own.last, last.minute - first.minute >= 3,
              let settled = own.first(where: { $0.minute - first.minute >= 1 }) else { continue }
        let growth = last.rssAnonMiB / settled.rssAnonMiB - 1
        let files = last.openFiles - settled.openFiles
        let ok = growth < 0.10 && files <= 2
        flat = flat && ok
        lines.append(String(format: "  incarnation %d: RssAnon %.1f → %.1f MiB (%+.1f%%), open files %d → %d: %@", incarnation,
                            settled.rssAnonMiB, last.rssAnonMiB, growth * 100, settled.openFiles, last.openFiles, ok ? "flat" : "GROWING"))
    }
    lines.append("  memory and descriptors flat: \(flat ? "yes" : "NO")")
    lines.append("  invariants: \(total) stored once, badges equal a recount: \(recountHolds ? "yes" : "NO"), "
                 + "notifications for \(notified) of \(total) messages, outbox empty")
    return lines.joined(separator: "\n")
}
