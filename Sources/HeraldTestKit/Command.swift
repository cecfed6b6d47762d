import Foundation
import Synchronization

/// Runs a short command to completion, for the test kit and tests (mount, prlimit, psql, mosquitto_pub).
///
/// Tests run on Swift's cooperative pool, a few threads for the whole test process: ``run(_:_:)`` waits for
/// the command without holding one of them, so a test that runs `psql` does not stall the tests beside it.
public enum Command {
    /// Runs a command to completion; throws with its output when it fails, or when it is still running after
    /// `timeout` (it is then killed, so a hung `psql` fails its test with its name instead of holding the run).
    /// The output goes to a file, not a pipe: a pipe's reader waits for every copy of its write end to close,
    /// and a child another thread spawns at the same moment may hold one.
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(300)) async throws -> String {
        let launch = try Launch(executable, arguments)
        defer { launch.cleanUp() }
        let finished = Mutex(false)
        let timedOut = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
            // Whichever comes first, the exit or the timeout, resumes; the other does nothing.
            @Sendable func finish(timedOut: Bool) -> Bool {
                let first = finished.withLock { done in
                    defer { done = true }
                    return !done
                }
                if first { continuation.resume(returning: timedOut) }
                return first
            }
            // Foundation calls the handler on a thread of its own once the command has exited.
            launch.process.terminationHandler = { _ in _ = finish(timedOut: false) }
            do {
                try launch.process.run()
            } catch {
                launch.process.terminationHandler = nil
                finished.withLock { $0 = true }
                continuation.resume(throwing: error)
                return
            }
            let process = launch.process
            let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
            // A serial queue of its own gets a thread even when the global queue's few are all busy.
            DispatchQueue(label: "herald-command-timeout").asyncAfter(deadline: .now() + seconds) {
                if finish(timedOut: true) { kill(process.processIdentifier, SIGKILL) }
            }
        }
        if timedOut {
            throw TestKitError("\(executable) \(arguments.joined(separator: " ")) did not finish within \(timeout) and was killed: "
                               + launch.output)
        }
        return try launch.outcome()
    }

    /// ``run(_:_:)`` for code that cannot wait asynchronously (a `deinit`): blocks the calling thread.
    @discardableResult
    public static func runBlocking(_ executable: String, _ arguments: [String]) throws -> String {
        let launch = try Launch(executable, arguments)
        defer { launch.cleanUp() }
        try launch.process.run()
        launch.process.waitUntilExit()
        return try launch.outcome()
    }

    /// A process set up to write its output to a file of its own.
    private struct Launch {
        let process = Process()
        let executable: String
        let arguments: [String]
        let outputPath: String
        let sink: FileHandle

        init(_ executable: String, _ arguments: [String]) throws {
            self.executable = executable
            self.arguments = arguments
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.currentDirectoryURL = URL(fileURLWithPath: "/tmp")
            outputPath = NSTemporaryDirectory() + "herald-command-\(UUID().uuidString).log"
            guard FileManager.default.createFile(atPath: outputPath, contents: nil),
                  let sink = FileHandle(forWritingAtPath: outputPath) else { throw TestKitError("cannot create \(outputPath)") }
            self.sink = sink
            process.standardOutput = sink
            process.standardError = sink
        }

        /// What the command has written so far.
        var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

        /// The output of the exited command, or an error with it when the command failed.
        func outcome() throws -> String {
            let output = self.output
            guard process.terminationStatus == 0 else {
                throw TestKitError("\(executable) \(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): \(output)")
            }
            return output
        }

        func cleanUp() {
            try? sink.close()
            try? FileManager.default.removeItem(atPath: outputPath)
        }
    }
}
