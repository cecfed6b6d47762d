import Foundation
import HeraldPluginAPI

#if canImport(Glibc)
import Glibc
#endif

/// A plugin process with pipes to its stdin, stdout and stderr, spawned with a clean signal mask.
/// Owned by one thread (the exec source's loop).
final class ExecChild {
    let pid: pid_t
    let stdin: Int32
    let stdout: Int32
    let stderr: Int32
    private var exitStatus: Int32?

    struct SpawnError: Error, CustomStringConvertible {
        var description: String
    }

    init(command: [String], environment: [String: String]) throws {
        var toChild: [Int32] = [0, 0], fromChild: [Int32] = [0, 0], errors: [Int32] = [0, 0]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0, pipe(&errors) == 0 else { throw SpawnError(description: "pipe() failed") }
        let child: pid_t
        do {
            child = try ProcessSpawn.spawn(command, environment: environment) { actions in
                posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
                posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
                posix_spawn_file_actions_adddup2(&actions, errors[1], 2)
                for fd in toChild + fromChild + errors { posix_spawn_file_actions_addclose(&actions, fd) }
            }
        } catch {
            (toChild + fromChild + errors).forEach { close($0) }
            throw SpawnError(description: error.description)
        }
        close(toChild[0])
        close(fromChild[1])
        close(errors[1])
        pid = child
        stdin = toChild[1]
        stdout = fromChild[0]
        stderr = errors[0]
        _ = fcntl(stdout, F_SETFL, fcntl(stdout, F_GETFL) | O_NONBLOCK)
        _ = fcntl(stderr, F_SETFL, fcntl(stderr, F_GETFL) | O_NONBLOCK)
    }

    /// Writes a whole line to the child's stdin; `false` if the pipe is closed.
    func send(_ line: String) -> Bool {
        var bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { write(stdin, $0.baseAddress.map { $0 + offset }, $0.count - offset) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        bytes.removeAll()
        return true
    }

    /// Whether the child has exited (reaps it).
    var hasExited: Bool {
        if exitStatus != nil { return true }
        var raw: Int32 = 0
        guard waitpid(pid, &raw, WNOHANG) == pid else { return false }
        exitStatus = ProcessSpawn.exitStatus(raw)
        return true
    }

    /// The exit status once exited.
    var status: Int32? { exitStatus }

    /// Closes stdin (EOF asks the plugin to finish), waits up to `grace`, then SIGTERM, then SIGKILL.
    func stop(grace: Duration) {
        close(stdin)
        let deadline = ContinuousClock.now + grace
        while !hasExited, ContinuousClock.now < deadline { usleep(10_000) }
        if !hasExited { kill(pid, SIGTERM) }
        let killDeadline = ContinuousClock.now + .seconds(2)
        while !hasExited, ContinuousClock.now < killDeadline { usleep(10_000) }
        if !hasExited {
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            waitpid(pid, &raw, 0)
        }
        close(stdout)
        close(stderr)
    }
}
