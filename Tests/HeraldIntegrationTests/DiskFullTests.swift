import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Testing

/// The store's disk fills up under load, then space comes back.
@Suite("A full disk")
struct DiskFullTests {
    @Test func aFullDiskFailsCommitsAcknowledgesNothingAndHeraldResumesWhenSpaceReturns() async throws {
        // A small tmpfs where the machine lets the test mount one; otherwise a file-size limit on the
        // running gateway (raised again later), which fails its writes the same way.
        let disk = ProcessInfo.processInfo.environment["HERALD_TEST_FILE_SIZE_LIMIT"] == nil ? try? await SmallDisk(kibibytes: 1_536) : nil
        let broker = try await MosquittoBroker()
        let directory = try TemporaryDirectory(prefix: "herald-disk-full")
        var configuration = TestConfiguration(port: broker.port, storePath: (disk?.path ?? directory.path("")) + "/store.sqlite")
        configuration.durability = "full"
        let configPath = try directory.write("herald.yaml", configuration.yaml)
        let herald = try HeraldProcess(configPath: configPath, logPath: directory.path("herald.log"))
        try await herald.waitUntilConnected()
        if disk == nil { try await Self.limitFileSize(of: herald.child.pid, to: "1572864") }
        let client = try await TestMQTTClient(port: broker.port, maxInflight: 100)
        let total = 600
        let body = String(repeating: "x", count: 4_000)
        for index in 0..<total {
            try client.publish("chats/c\(index % 10)/messages", messageJSON(id: "m\(index)", from: "alice", to: ["bob"], body: body,
                                                                          sentAt: 1_000_000 + Int64(index)))
        }
        try await client.waitForAcknowledgements(total)  // the broker holds what Herald cannot take
        let ready = configuration.adminURL + "/readyz"
        try await eventually("not ready, saying the disk is full", timeout: .seconds(60)) {
            guard let answer = try? await fetch(ready) else { return false }
            // SQLite says "database or disk is full" for ENOSPC and "disk I/O error" for EFBIG.
            return answer.status == 503 && answer.body.contains("commits failing") && answer.body.contains("disk")
        }
        let store = try SQLiteChatStore(path: configuration.storePath, durability: .normal)
        let storedWhileFull = try store.statistics().messages
        #expect(storedWhileFull < total, "the disk should fill before every message is stored")
        let fullSince = ContinuousClock.now
        // Stay full for a few seconds of retries, then give the space back.
        try await eventually("a few failed commits", timeout: .seconds(30)) {
            herald.child.output.components(separatedBy: "Commit failed").count - 1 >= 3
        }
        let fullFor = ContinuousClock.now - fullSince
        if let disk { try await disk.resize(kibibytes: 65_536) } else { try await Self.limitFileSize(of: herald.child.pid, to: "unlimited") }
        try await eventually("every message stored once space returns", timeout: .seconds(120)) {
            try store.statistics().messages == total
        }
        try await eventually("ready again", timeout: .seconds(30)) { (try? await fetch(ready).status) == 200 }
        #expect(herald.child.isRunning, "Herald exited while the disk was full")
        #expect(try store.badge(for: "bob").unread == total, "every message counted once")
        #expect(try store.unreadAgainstRecount().allSatisfy { $0.stored == $0.recounted })
        // Failed commits are logged as the source retries with backoff, not once per message.
        let failures = herald.child.output.components(separatedBy: "Commit failed").count - 1
        let seconds = Int(fullFor.components.seconds) + 60
        #expect(failures <= seconds, "\(failures) commit failures logged in about \(seconds) s")
        try await client.close()
        herald.child.signal(SIGTERM)
        _ = try await herald.child.waitForExit()
    }
    /// Sets the soft file-size limit of a running process (the hard limit stays unlimited, so it can be raised).
    static func limitFileSize(of pid: Int32, to soft: String) async throws {
        try await Command.run("/usr/bin/prlimit", ["--pid", "\(pid)", "--fsize=\(soft):unlimited"])
    }
}
