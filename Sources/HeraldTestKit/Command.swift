import Foundation

/// Runs a short command to completion, for the test kit and tests (mount, prlimit, psql, mosquitto_pub).
///
/// Tests run on Swift's cooperative pool, a few threads for the whole test process: ``run(_:_:)`` waits for
/// the command without holding one of them, so a test that runs `psql` does not stall the tests beside it.
public enum Command {
    /// Runs a command to completion; throws with its output when it fails. The output goes to a file, not a
    /// pipe: a pipe's reader waits for every copy of its write end to close, and a child another thread
    /// spawns at the same moment may hold one.
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String]) async throws -> String {
        let launch = try Launch(executable, arguments)
        defer { launch.cleanUp() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            // Foundation calls the handler on a thread of its own once the command has exited.
            launch.process.terminationHandler = { _ in continuation.resume() }
            do {
                try launch.process.run()
            } catch {
                launch.process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
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

        /// The output of the exited command, or an error with it when the command failed.
        func outcome() throws -> String {
            let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
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
