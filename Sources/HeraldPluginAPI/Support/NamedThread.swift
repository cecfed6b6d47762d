import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Starts an adapter's own thread under a name that `top -H`, `ps -L`, `perf` and
/// `/proc/PID/task/*/comm` show, so an operator can tell which part of Herald spends the CPU.
///
/// Linux keeps at most 15 bytes of a thread's name and refuses a longer one outright. Foundation's
/// `Thread.name` cannot carry it reliably: its setter applies a name only once `start()` has stored the
/// new thread's handle, which happens on the starting thread after the new one may already be running,
/// so a name given before `start()`, or by the new thread in its first moments, can be dropped without
/// a word. ``start(named:_:)`` names the thread from inside it, cut to fit, by writing the name to
/// `/proc/thread-self/comm` (the kernel's own interface; `pthread_setname_np` is not in Swift's Glibc
/// module).
public enum NamedThread {
    /// The longest name, in UTF-8 bytes, that Linux keeps for a thread.
    public static let maximumBytes = 15

    /// Runs `body` on a new thread named `name` (cut to ``maximumBytes`` by ``fitting(_:)``).
    public static func start(named name: String, _ body: @escaping @Sendable () -> Void) {
        let fitted = fitting(name)
        let thread = Thread {
            nameCurrentThread(fitted)
            body()
        }
        thread.start()
    }

    /// Gives the calling thread `name` (at most ``maximumBytes`` bytes). A thread without its name still
    /// works, so a failure is ignored.
    private static func nameCurrentThread(_ name: String) {
        #if canImport(Glibc)
        let file = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard file >= 0 else { return }
        defer { close(file) }
        var bytes = Array(name.utf8)
        _ = write(file, &bytes, bytes.count)
        #endif
    }

    /// `name` cut to at most ``maximumBytes`` UTF-8 bytes, keeping whole characters.
    public static func fitting(_ name: String) -> String {
        var fitted = ""
        var bytes = 0
        for character in name {
            bytes += character.utf8.count
            if bytes > maximumBytes { break }
            fitted.append(character)
        }
        return fitted
    }
}
