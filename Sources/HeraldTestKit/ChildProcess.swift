import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process started by a test, with stdout and stderr captured to a file.
///
/// Spawned with `posix_spawn`, an empty signal mask and default signal dispositions, exactly as a
/// shell would start it. (A test runner's threads may block signals; a child that inherits the
/// mask — mosquitto restores it inside `epoll_pwait` — would never see SIGTERM.)
public final class ChildProcess: Sendable {
    /// The process id.
    public let pid: pid_t
    /// The file receiving stdout and stderr.
    public let logPath: String
    private let exitStatus = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments`; output goes to `logPath`; stdin is /dev/null.
    public init(executable: String, arguments: [String], logPath: String, environment: [String: String]? = nil) throws {
        self.logPath = logPath
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        let environment = environment ?? ProcessInfo.processInfo.environment
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard result == 0 else { throw TestKitError("cannot start \(executable): \(String(cString: strerror(result)))") }
        pid = child
    }

    /// Whether it is still running (reaps it once it has exited).
    public var isRunning: Bool {
        exitStatus.withLock { status in
            guard status == nil else { return false }
            var raw: Int32 = 0
            guard waitpid(pid, &raw, WNOHANG) == pid else { return true }
            status = (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
            return false
        }
    }

    /// Sends a signal.
    public func signal(_ number: Int32) { kill(pid, number) }

    /// Waits for exit (polling, with a deadline); returns the exit status (128+N when killed by signal N).
    public func waitForExit(timeout: Duration = .seconds(20)) async throws -> Int32 {
        try await eventually("process \(pid) to exit", timeout: timeout, poll: .milliseconds(10)) { !isRunning }
        return exitStatus.withLock { $0 } ?? -1
    }

    /// SIGKILL and wait.
    public func kill9() async throws {
        signal(SIGKILL)
        _ = try await waitForExit()
    }

    /// The captured output so far.
    public var output: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    deinit {
        if isRunning {
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            waitpid(pid, &raw, 0)
        }
    }
}
