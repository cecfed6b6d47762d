import Foundation

/// A fresh directory under the system temp dir, removed when the value is released.
public final class TemporaryDirectory: Sendable {
    /// The directory.
    public let url: URL

    /// Creates the directory.
    public init(prefix: String = "herald-test") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// Removes the directory once the process `pid` (this one by default) has exited, for a directory that a
    /// `static` holds: a process's exit runs no deinit. A shell of its own waits for the process to end,
    /// then removes the directory.
    public func removeAfterExit(of pid: pid_t = getpid()) throws {
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = ["-c", "while kill -0 \(pid) 2>/dev/null; do sleep 0.5; done; rm -rf \"$0\"", url.path]
        watchdog.standardInput = FileHandle.nullDevice
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        try watchdog.run()
    }

    /// A path inside the directory.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes a text file inside the directory and returns its path.
    @discardableResult
    public func write(_ name: String, _ text: String) throws -> String {
        let path = path(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}

/// Errors of the test kit.
public struct TestKitError: Error, CustomStringConvertible {
    /// What happened.
    public var description: String
    /// Creates the error.
    public init(_ description: String) { self.description = description }
}

/// Polls `condition` until it is true or `timeout` passes. For waiting on another *process*
/// (a broker, the gateway) where there is no event to await; the condition is what is awaited.
/// - Throws: ``TestKitError`` naming `what` on timeout.
public func eventually(_ what: String, timeout: Duration = .seconds(60), poll: Duration = .milliseconds(25),
                       _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await condition() { return }
        guard ContinuousClock.now < deadline else { throw TestKitError("timed out after \(timeout) waiting for: \(what)") }
        try await Task.sleep(for: poll)
    }
}
