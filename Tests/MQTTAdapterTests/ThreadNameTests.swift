import Foundation
import HeraldPluginAPI
import HeraldTestKit
import MQTTAdapter
import Testing

/// Herald's own threads carry names that `top -H`, `ps -L` and `perf` show.
@Suite struct ThreadNameTests {
    @Test func aNameIsCutToTheFifteenBytesLinuxKeepsAtACharacterBoundary() {
        #expect(NamedThread.fitting("mqtt-in broker") == "mqtt-in broker")
        #expect(NamedThread.fitting("mqtt-out client_push") == "mqtt-out client")
        #expect(NamedThread.fitting("exec 文字化けテスト") == "exec 文字化")
        #expect(NamedThread.fitting("").isEmpty)
    }

    /// Each thread has its name from its first moment: Foundation's setter dropped it for about one
    /// thread in thirty here, when the new thread ran before `start()` had returned.
    @Test func everyThreadIsNamedBeforeItsWorkBegins() async {
        let (names, results) = AsyncStream.makeStream(of: (expected: String, seen: String?).self)
        for index in 0..<300 {
            NamedThread.start(named: "probe-\(index)") {
                results.yield((expected: "probe-\(index)", seen: Self.ownName()))
            }
        }
        var wrong: [String] = []
        var seen = 0
        for await result in names {
            if result.seen != result.expected { wrong.append("\(result.expected): \(result.seen ?? "unreadable")") }
            seen += 1
            if seen == 300 { break }
        }
        #expect(wrong.isEmpty, "threads without their name: \(wrong.count) of 300, \(wrong.prefix(5))")
    }

    /// The calling thread's name as Linux keeps it.
    private static func ownName() -> String? {
        (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Through a real broker: while the source runs, the process has a thread named after it. A name
    /// given through Foundation's `Thread.name` can be dropped when the new thread runs before `start()`
    /// returns, and a name over 15 bytes is refused: either would leave the source's thread unnamed here.
    @Test func aRunningMQTTSourceHasANamedThread() async throws {
        let broker = try await MosquittoBroker()
        let source = try RunningSource(yaml: RunningSource.yaml("named-source", broker: broker, extra: ""))
        defer { source.task.cancel() }
        try await eventually("the source to connect") { source.context.health.snapshot.connected }
        #expect(Self.threadNames().contains("mqtt-in named-s"))
        await source.stop()
    }

    /// The names of this process's threads.
    private static func threadNames() -> Set<String> {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return Set(tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        })
    }
}
