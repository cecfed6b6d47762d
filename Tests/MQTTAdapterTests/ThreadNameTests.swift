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

    /// Through a real broker: while the source runs, the process has a thread named after it. A name
    /// given to a Foundation thread before it starts is never applied on Linux, and a name over 15
    /// bytes is refused: either would leave the source's thread unnamed here.
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
