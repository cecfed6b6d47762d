import Foundation

/// Runs a short command to completion, for the test kit and tests (mount, prlimit, psql, mosquitto_pub).
public enum Command {
    /// Runs a command to completion; throws with its output when it fails. The output goes to a file, not a
    /// pipe: a pipe's reader waits for every copy of its write end to close, and a child another thread
    /// spawns at the same moment may hold one.
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: "/tmp")
        let outputPath = NSTemporaryDirectory() + "herald-command-\(UUID().uuidString).log"
        guard FileManager.default.createFile(atPath: outputPath, contents: nil),
              let sink = FileHandle(forWritingAtPath: outputPath) else { throw TestKitError("cannot create \(outputPath)") }
        defer {
            try? sink.close()
            try? FileManager.default.removeItem(atPath: outputPath)
        }
        process.standardOutput = sink
        process.standardError = sink
        try process.run()
        process.waitUntilExit()
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard process.terminationStatus == 0 else {
            throw TestKitError("\(executable) \(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): \(output)")
        }
        return output
    }
}
