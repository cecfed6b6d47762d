import Foundation
import HeraldTestKit
import Synchronization
import Testing

/// The test kit's `ChildProcess` lets a crashed Swift process finish its crash report before it kills it:
/// `make test` fails on a report, and a SIGKILL while the backtracer writes would lose it.
/// (`CrashReportTests` crashes a real `herald`.)
@Suite("Test kit: a child that crashed is killed after its crash report")
struct ChildProcessTests {
    /// A shell with a stand-in for Swift's backtracer as its child: a script named `swift-backtrace` that
    /// waits until `release` exists, then writes `report` if the shell is still its parent (a real
    /// backtracer cannot read a process that was killed), as a crashed process waits for its report.
    private static func crashingChild(in directory: TemporaryDirectory) throws -> ChildProcess {
        let backtracer = try directory.write("swift-backtrace", """
            #!/bin/sh
            while [ ! -e "$1" ]; do sleep 0.02; done
            [ "$(cut -d ' ' -f 4 /proc/$$/stat)" = "$PPID" ] && echo written > "$2"
            exit 0
            """)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: backtracer)
        return try ChildProcess(executable: "/bin/sh", arguments: ["-c", "\"$0\" \"$1\" \"$2\"; exit 139", backtracer,
                                                                   directory.path("release"), directory.path("report")],
                                logPath: directory.path("child.log"))
    }

    @Test func kill9WaitsForTheBacktracer() async throws {
        let directory = try TemporaryDirectory()
        let child = try Self.crashingChild(in: directory)
        try await eventually("the stand-in backtracer to start") { child.isWritingCrashReport }
        let killing = Atomic(false)
        let kill = Task {
            killing.store(true, ordering: .sequentiallyConsistent)
            try await child.kill9()
        }
        // Released once kill9 runs: killed at once, the shell is gone before the stand-in looks for it.
        try await eventually("kill9 to be called") { killing.load(ordering: .sequentiallyConsistent) }
        #expect(FileManager.default.createFile(atPath: directory.path("release"), contents: nil))
        try await kill.value
        #expect(FileManager.default.fileExists(atPath: directory.path("report")), "killed before the report was written")
    }

    @Test func releasingTheChildLetsTheBacktracerFinish() async throws {
        let directory = try TemporaryDirectory()
        do {
            let child = try Self.crashingChild(in: directory)
            try await eventually("the stand-in backtracer to start") { child.isWritingCrashReport }
        }  // released here, as at the end of a test
        #expect(FileManager.default.createFile(atPath: directory.path("release"), contents: nil))
        try await eventually("the report to be written") { FileManager.default.fileExists(atPath: directory.path("report")) }
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
