import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process started by a test, with its output captured to a file.
public final class ChildProcess: @unchecked Sendable {
    private let process: Process
    /// The file receiving stdout and stderr.
    public let logPath: String

    /// Starts `executable` with `arguments`; output goes to `logPath`.
    public init(executable: String, arguments: [String], logPath: String, environment: [String: String]? = nil) throws {
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        guard let log = FileHandle(forWritingAtPath: logPath) else { throw TestKitError("cannot open \(logPath)") }
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = log
        process.standardError = log
        if let environment { process.environment = environment }
        self.logPath = logPath
        try process.run()
    }

    /// The process id.
    public var pid: Int32 { process.processIdentifier }
    /// Whether it is still running.
    public var isRunning: Bool { process.isRunning }

    /// Sends a signal.
    public func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for exit (polling, with a deadline) and returns the exit status.
    public func waitForExit(timeout: Duration = .seconds(20)) async throws -> Int32 {
        try await eventually("process \(pid) to exit", timeout: timeout, poll: .milliseconds(10)) { !process.isRunning }
        return process.terminationStatus
    }

    /// SIGKILL and wait.
    public func kill9() async throws {
        signal(SIGKILL)
        _ = try await waitForExit()
    }

    /// The captured output so far.
    public var output: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
}
