import Foundation
import HeraldTestKit
import Testing

/// A directory that a `static` holds is removed by a watchdog once its process has exited (an exit runs
/// no deinit); here the process watched is a child the test ends.
@Suite("Test kit: a temporary directory removed after its process exits")
struct TemporaryDirectoryTests {
    @Test func theDirectoryStaysWhileTheProcessRunsAndGoesAfter() async throws {
        let log = try TemporaryDirectory()
        let process = try ChildProcess(executable: "/bin/sleep", arguments: ["300"], logPath: log.path("sleep.log"))
        // Held until the end, as a static would be: its own deinit cannot be what removes it.
        let directory = try TemporaryDirectory(prefix: "herald-after-exit")
        let file = try directory.write("certificate.pem", "test")
        try directory.removeAfterExit(of: process.pid)
        try await eventually("the watchdog to be waiting for the process") {
            ProcessTable.children(of: getpid()).contains { child in
                (try? String(contentsOfFile: "/proc/\(child.pid)/cmdline", encoding: .utf8))?.contains(directory.url.path) ?? false
            }
        }
        #expect(FileManager.default.fileExists(atPath: file), "removed while the process runs")
        try await process.kill9()
        try await eventually("the directory to be removed") { !FileManager.default.fileExists(atPath: directory.url.path) }
    }
}
