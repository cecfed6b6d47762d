import Foundation

/// Starts an adapter's own thread under a name that `top -H`, `ps -L`, `perf` and
/// `/proc/PID/task/*/comm` show, so an operator can tell which part of Herald spends the CPU.
///
/// Linux keeps at most 15 bytes of a thread's name and refuses a longer one outright, and Foundation
/// names a thread only when the thread sets the name itself; a name given before `start()` is never
/// applied. ``start(named:_:)`` sets it from inside the new thread, cut to fit.
public enum NamedThread {
    /// The longest name, in UTF-8 bytes, that Linux keeps for a thread.
    public static let maximumBytes = 15

    /// Runs `body` on a new thread named `name` (cut to ``maximumBytes`` by ``fitting(_:)``).
    public static func start(named name: String, _ body: @escaping @Sendable () -> Void) {
        let fitted = fitting(name)
        let thread = Thread {
            Thread.current.name = fitted
            body()
        }
        thread.start()
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
