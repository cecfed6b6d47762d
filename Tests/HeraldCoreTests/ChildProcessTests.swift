import Foundation
import HeraldTestKit
import Testing

/// The test kit's `ChildProcess` lets a crashed Swift process finish its crash report before it kills it:
/// `make test` fails on a report, and a SIGKILL while the backtracer writes would lose it.
@Suite("Test kit: a child that crashed is killed after its crash report")
struct ChildProcessTests {
    /// A shell that starts a stand-in for Swift's backtracer as its child (an executable named
    /// `swift-backtrace` that runs for a second), then writes `report` when it is done, as a crashed
    /// process's report is written once its backtracer ends.
    private static func crashingChild(in directory: TemporaryDirectory) throws -> ChildProcess {
        let backtracer = directory.path("swift-backtrace"), report = directory.path("report")
        try FileManager.default.copyItem(atPath: "/bin/sleep", toPath: backtracer)
        return try ChildProcess(executable: "/bin/sh", arguments: ["-c", "\"$0\" 1; echo written > \"$1\"", backtracer, report],
                                logPath: directory.path("child.log"))
    }

    @Test func kill9WaitsForTheBacktracer() async throws {
        let directory = try TemporaryDirectory()
        let child = try Self.crashingChild(in: directory)
        try await eventually("the stand-in backtracer to start") { child.isWritingCrashReport }
        _ = try await child.kill9()
        #expect(FileManager.default.fileExists(atPath: directory.path("report")), "killed before the report was written")
    }

    @Test func releasingTheChildWaitsForTheBacktracer() async throws {
        let directory = try TemporaryDirectory()
        do {
            let child = try Self.crashingChild(in: directory)
            try await eventually("the stand-in backtracer to start") { child.isWritingCrashReport }
        }
        #expect(FileManager.default.fileExists(atPath: directory.path("report")), "killed before the report was written")
    }

    /// Only a child named as Swift's backtracer counts: a process with another child is not crashing.
    @Test func anotherChildIsNoBacktracer() async throws {
        let directory = try TemporaryDirectory()
        let child = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "sleep 600 & echo $!; wait"], logPath: directory.path("child.log"))
        try await eventually("the shell's child to run sleep") {
            let sleeper = child.output.trimmingCharacters(in: .whitespacesAndNewlines)
            return !sleeper.isEmpty && (try? String(contentsOfFile: "/proc/\(sleeper)/comm", encoding: .utf8)) == "sleep\n"
        }
        #expect(child.isRunning)
        #expect(!child.isWritingCrashReport)
        try await child.kill9()
    }
}
