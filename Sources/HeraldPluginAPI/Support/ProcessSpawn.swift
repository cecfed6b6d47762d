#if canImport(Glibc)
public import Glibc
#endif

/// Starts child processes the way a shell does: an empty signal mask, default signal dispositions and
/// no descriptors but the standard streams.
/// A parent's threads may block signals (test runners do); a child that inherits that mask may never see
/// SIGTERM (mosquitto restores its inherited mask while waiting). Shared by the exec adapter and the test kit.
public enum ProcessSpawn {
    /// A spawn failure.
    public struct Failure: Error, CustomStringConvertible {
        /// What failed.
        public var description: String
    }

    /// Spawns `command` (looked up in `PATH` unless it contains a `/`) with `environment`;
    /// `fileActions` sets up its standard streams.
    /// - Returns: the child's process id.
    public static func spawn(_ command: [String], environment: [String: String],
                             fileActions: (inout posix_spawn_file_actions_t) -> Void) throws(Failure) -> pid_t {
        guard let program = command.first else { throw Failure(description: "empty command") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        fileActions(&actions)
        // Only the standard streams reach the child: without this it would inherit every descriptor the
        // parent has open without close-on-exec (another thread's pipe, a socket), hold a pipe's write end
        // open, and keep that pipe's reader from ever seeing end of file.
        if let closeFrom = Self.closeFrom { _ = closeFrom(&actions, 3) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = command.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let result = posix_spawnp(&child, program, &actions, &attributes, argv, envp)
        guard result == 0 else { throw Failure(description: "cannot start \(program): \(String(cString: strerror(result)))") }
        return child
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and newer), which its headers declare only
    /// for GNU sources; looked up once by name.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// The exit status from a `waitpid` status word: the exit code, or 128 + N when killed by signal N.
    public static func exitStatus(_ raw: Int32) -> Int32 {
        (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
    }
}
