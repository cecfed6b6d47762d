import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Testing

/// The exec adapter through the real `herald` binary and the example plugin (a real Python child).
@Suite("Exec adapter with the example plugin", .serialized)
struct ExecAdapterTests {
    static let plugin = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("plugins/examples/jsonl_tail.py").path

    /// A gateway whose only source is the example plugin following `events.jsonl`.
    struct World {
        let directory: TemporaryDirectory
        let configPath: String
        let storePath: String
        let adminPort: Int
        var events: String { directory.path("events.jsonl") }
        var state: String { directory.path("state") }
        var stats: String { directory.path("stats.json") }

        init(maxUnacked: Int = 100, pluginArguments: (TemporaryDirectory) -> [String] = { _ in [] }) throws {
            directory = try TemporaryDirectory(prefix: "herald-exec")
            let pluginArguments = pluginArguments(directory)
            storePath = directory.path("store.sqlite")
            adminPort = try Loopback.freePort()
            let arguments = ["python3", ExecAdapterTests.plugin, "--file", directory.path("events.jsonl"), "--state", directory.path("state"),
                             "--stats", directory.path("stats.json")] + pluginArguments
            try directory.write("events.jsonl", "")
            configPath = try directory.write("herald.yaml", """
                store:
                  path: \(storePath)
                  durability: normal
                admin:
                  listen: 127.0.0.1:\(adminPort)
                sources:
                  - name: files
                    type: exec
                    command: [\(arguments.map { "\"\($0)\"" }.joined(separator: ", "))]
                    max_unacked: \(maxUnacked)
                """)
        }

        func append(_ lines: [String]) throws {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: events))
            handle.seekToEndOfFile()
            handle.write(Data(lines.map { $0 + "\n" }.joined().utf8))
            try handle.close()
        }

        var ackedOffset: Int { Int((try? String(contentsOfFile: state, encoding: .utf8)) ?? "0") ?? 0 }
        var fileSize: Int { (try? FileManager.default.attributesOfItem(atPath: events)[.size] as? Int) ?? 0 }
        func statistics() -> [String: Int] {
            (try? JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Int]) ?? [:]
        }
        func store() throws -> SQLiteChatStore { try SQLiteChatStore(path: storePath, durability: .normal) }
    }

    static func message(_ index: Int) -> String {
        #"{"type":"message.received","chat":"c\#(index % 7)","id":"m\#(index)","from":"alice","to":["bob"],"body":"hello \#(index)","sent_at":\#(1_000 + index)}"#
    }

    @Test func acknowledgesOnlyCommittedEventsAndNacksBadOnes() async throws {
        let world = try World()
        let herald = try HeraldProcess(configPath: world.configPath, logPath: world.directory.path("herald.log"))
        try world.append((0..<200).map(Self.message) + [#"{"type":"message.deleted","chat":"c1"}"#, "not json at all",
                                                        #"{"type":"messages.read","chat":"c1","up_to":"m1"}"#])
        // Whatever the plugin has seen acknowledged must already be in the store (ack after commit).
        for _ in 0..<5 {
            let acked = world.ackedOffset
            let stored = try world.store().statistics().messages
            let ackedLines = try String(contentsOfFile: world.events, encoding: .utf8).utf8.prefix(acked).filter { $0 == UInt8(ascii: "\n") }.count
            #expect(stored >= min(ackedLines, 200), "acked \(ackedLines) lines but only \(stored) stored")
            try await Task.sleep(for: .milliseconds(30))
        }
        try await eventually("every line answered") { world.ackedOffset == world.fileSize }
        let store = try world.store()
        #expect(try store.statistics().messages == 200)
        let letters = try store.deadLetters(limit: 10, includeReplayed: false)
        // Unknown type; a line that is not JSON (the plugin wraps it, it has no chat); a read without its user.
        #expect(letters.map(\.rejection.reason) == [.unknownEventKind, .missingField, .identityMismatch], "\(letters.map(\.rejection))")
        try await eventually("the plugin counted three nacks") { world.statistics()["nacked"] == 3 }
        #expect(herald.child.output.contains("Plugin says: event 201 dead-lettered"))
        herald.child.signal(SIGTERM)
        #expect(try await herald.child.waitForExit() == 0)
    }

    @Test func aCrashMidStreamIsRestartedAndRedeliveredWithoutDuplicates() async throws {
        let world = try World(maxUnacked: 20) { ["--crash-after", "150", "--crash-marker", $0.path("crashed-once")] }
        let marker = world.directory.path("crashed-once")
        let herald = try HeraldProcess(configPath: world.configPath, logPath: world.directory.path("herald.log"))
        _ = herald
        try world.append((0..<500).map(Self.message))
        try await eventually("all 500 stored", timeout: .seconds(60)) { try world.store().statistics().messages == 500 }
        try await eventually("every line acknowledged") { world.ackedOffset == world.fileSize }
        #expect(FileManager.default.fileExists(atPath: marker))
        #expect(herald.child.output.contains("Exec plugin stopped; restarting."))
        let mismatches = try world.store().unreadAgainstRecount().filter { $0.stored != $0.recounted }
        #expect(mismatches.isEmpty)
        #expect(try world.store().badge(for: "bob").unread == 500)
    }

    @Test func aFloodingPluginIsHeldToTheUnackedBound() async throws {
        let world = try World(maxUnacked: 10)
        let herald = try HeraldProcess(configPath: world.configPath, logPath: world.directory.path("herald.log"))
        _ = herald
        try world.append((0..<3000).map(Self.message))
        try await eventually("all stored", timeout: .seconds(60)) { try world.store().statistics().messages == 3000 }
        // Herald never holds more than max_unacked events unanswered: every commit batch has at most 10.
        // (The plugin's own outstanding count also includes pipe contents and acks it has not read yet.)
        let metrics = try await fetch("http://127.0.0.1:\(world.adminPort)/metrics").body.split(separator: "\n")
        func value(_ prefix: String) -> Double? {
            metrics.first { $0.hasPrefix(prefix) }.flatMap { Double($0.split(separator: " ").last ?? "") }
        }
        let batches = try #require(value("herald_commit_batch_size_count"))
        let atMostTen = try #require(value("herald_commit_batch_size_bucket{le=\"10.0\"}") ?? value("herald_commit_batch_size_bucket{le=\"10\"}"))
        #expect(batches >= 300, "3000 events in batches of at most 10")
        #expect(atMostTen == batches, "\(batches - atMostTen) batches were larger than max_unacked")
    }

    /// A Herald that is killed in the middle of an answer leaves the plugin a torn last line, then end of
    /// file. The example plugin stops then as well, instead of following its file on for nobody (its
    /// reader thread failed and nothing else watched stdin).
    @Test func theExamplePluginStopsWhenItsAnswersBreakOff() async throws {
        let directory = try TemporaryDirectory(prefix: "herald-exec-torn")
        try directory.write("events.jsonl", "")
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let plugin: ChildProcess
        do {
            defer { close(ends[0]) }
            plugin = try ChildProcess(executable: "python3", arguments: [Self.plugin, "--file", directory.path("events.jsonl"),
                                                                         "--state", directory.path("state")],
                                      logPath: directory.path("plugin.log"), standardInput: ends[0])
        }
        let torn = Array("{\"protocol\":1}\n{\"ack\":".utf8)
        #expect(torn.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) } == torn.count)
        close(ends[1])
        let status = try await plugin.waitForExit(timeout: .seconds(30))
        #expect(status == 1, "\(plugin.output)")
        #expect(plugin.output.contains("\"name\": \"jsonl-tail\""), "the plugin answered the hello: \(plugin.output)")
    }
}
