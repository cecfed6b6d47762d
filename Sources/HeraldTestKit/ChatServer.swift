import Foundation

/// The upstream servers of `Tests/Servers/chat_server.py` (a real Python process on 127.0.0.1): REST
/// pages with ETags and cursors, a webhook receiver, or a WebSocket event stream; TLS when given a
/// certificate. Behaviour is changed and observed through its control port.
public final class ChatServer: Sendable {
    /// What the data port serves.
    public enum Mode: String, Sendable { case rest, ws }

    /// The data port.
    public let port: Int
    /// The control port.
    public let controlPort: Int
    /// The process.
    public let process: ChildProcess

    /// The script, found from this file's location.
    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tests/Servers/chat_server.py").path

    /// Starts a server; `tls` is (certificate, key) files, `clientCA` makes it require client certificates;
    /// `arguments` are passed on (e.g. `--page-size`).
    public init(_ mode: Mode, in directory: TemporaryDirectory, tls: (cert: String, key: String)? = nil, maxTLS: String? = nil,
                clientCA: String? = nil, arguments: [String] = [], port: Int? = nil) async throws {
        self.port = try port ?? Loopback.freePort()
        controlPort = try Loopback.freePort()
        var all = [Self.script, "--mode", mode.rawValue, "--port", "\(self.port)", "--control-port", "\(controlPort)"] + arguments
        if let tls { all += ["--cert", tls.cert, "--key", tls.key] }
        if let maxTLS { all += ["--max-tls", maxTLS] }
        if let clientCA { all += ["--client-ca", clientCA] }
        process = try ChildProcess(executable: "/usr/bin/env", arguments: ["python3"] + all,
                                   logPath: directory.path("chat-server-\(mode.rawValue)-\(self.port).log"))
        let data = self.port, control = controlPort, process = process
        try await eventually("chat server listening", timeout: .seconds(60)) {
            guard process.isRunning else { throw TestKitError("chat server exited: \(process.output)") }
            return Loopback.isListening(port: data) && Loopback.isListening(port: control)
        }
    }

    /// Posts a control command (`/append`, `/faults`, `/hook_responses`, `/ws`).
    public func control(_ path: String, _ body: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: body)
        _ = try Loopback.post(port: controlPort, path: path, json: String(decoding: data, as: UTF8.self))
    }

    /// Adds events to serve.
    public func append(_ events: [[String: Any]]) throws { try control("/append", ["events": events]) }

    /// What the server saw: `requests`, `hooks`, `connections`, `events`.
    public func log() throws -> [String: Any] {
        let text = try Loopback.get(port: controlPort, path: "/log")
        return (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
    }

    /// One list of the log.
    public func log(_ key: String) throws -> [[String: Any]] { (try log()[key] as? [[String: Any]]) ?? [] }

    /// Stops the server.
    public func stop() async { try? await process.kill9() }

    /// Writes `expired.pem` / `expired.key` into `directory`: a localhost certificate from `ca` whose
    /// validity ended yesterday.
    public static func makeExpiredCertificate(in directory: TemporaryDirectory, ca: TestCertificates) async throws -> (cert: String, key: String) {
        let child = try ChildProcess(executable: "/usr/bin/env", arguments: [
            "python3", script, "--expired-cert", directory.path(""), "--ca-cert", ca.caFile, "--ca-key", ca.caKeyFile,
        ], logPath: directory.path("expired-cert.log"))
        guard try await child.waitForExit() == 0 else { throw TestKitError("expired certificate: \(child.output)") }
        return (directory.path("expired.pem"), directory.path("expired.key"))
    }
}
