import Foundation
import HeraldPluginAPI
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process started by a test, with stdout and stderr captured to a file.
///
/// Spawned with ``ProcessSpawn`` (an empty signal mask and default dispositions, as a shell would).
public final class ChildProcess: Sendable {
    /// The process id.
    public let pid: pid_t
    /// The file receiving stdout and stderr.
    public let logPath: String
    private let exitStatus = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments`; output goes to `logPath`; stdin is `standardInput` (a
    /// descriptor the test keeps and closes) or /dev/null. A given `environment` still carries the
    /// sanitizers' options of this process, so a sanitized `herald` runs under the same rules as the tests
    /// that start it.
    public init(executable: String, arguments: [String], logPath: String, environment: [String: String]? = nil,
                standardInput: Int32? = nil) throws {
        self.logPath = logPath
        let inherited = ProcessInfo.processInfo.environment
        var environment = environment ?? inherited
        for name in ["ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS"] where environment[name] == nil {
            environment[name] = inherited[name]
        }
        let child: pid_t
        do {
            child = try ProcessSpawn.spawn([executable] + arguments, environment: environment) { actions in
                if let standardInput {
                    posix_spawn_file_actions_adddup2(&actions, standardInput, 0)
                } else {
                    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
                }
                posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                posix_spawn_file_actions_adddup2(&actions, 1, 2)
            }
        } catch {
            throw TestKitError(error.description)
        }
        pid = child
    }

    /// Whether it is still running (reaps it once it has exited).
    public var isRunning: Bool {
        exitStatus.withLock { status in
            guard status == nil else { return false }
            var raw: Int32 = 0
            guard waitpid(pid, &raw, WNOHANG) == pid else { return true }
            status = ProcessSpawn.exitStatus(raw)
            return false
        }
    }

    /// Sends a signal.
    public func signal(_ number: Int32) { kill(pid, number) }

    /// Waits for exit (polling, with a deadline); returns the exit status (128+N when killed by signal N).
    public func waitForExit(timeout: Duration = .seconds(60)) async throws -> Int32 {
        try await eventually("process \(pid) to exit", timeout: timeout, poll: .milliseconds(10)) { !isRunning }
        return exitStatus.withLock { $0 } ?? -1
    }

    /// SIGKILL and wait; a process that crashed first is killed once its crash report is written.
    public func kill9() async throws {
        if isWritingCrashReport {
            try? await eventually("the crash report of process \(pid)", timeout: Self.crashReportTimeout) { !isWritingCrashReport }
        }
        signal(SIGKILL)
        _ = try await waitForExit()
    }

    /// The captured output so far.
    public var output: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Kills the process if it still runs; one that crashed is killed once its crash report is written.
    deinit {
        guard isRunning else { return }
        if isWritingCrashReport {
            Self.killAfterCrashReport(pid)
            return
        }
        kill(pid, SIGKILL)
        var raw: Int32 = 0
        waitpid(pid, &raw, 0)
    }
}
