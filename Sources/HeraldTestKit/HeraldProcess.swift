import Foundation
import HeraldCore

/// The real `herald` executable run as a child process against a test config, so tests can
/// `kill -9` it, send SIGTERM and restart it like an operator would.
public final class HeraldProcess: Sendable {
    /// The running child.
    public let child: ChildProcess

    /// Starts `herald run -c configPath`, logging to `logPath`.
    public init(configPath: String, logPath: String, environment: [String: String] = [:]) throws {
        var merged = ProcessInfo.processInfo.environment
        merged.merge(environment) { $1 }
        child = try ChildProcess(executable: Self.binary, arguments: ["run", "--config", configPath], logPath: logPath,
                                 environment: merged)
    }

    /// Waits until the log shows that every source and sink connected.
    public func waitUntilConnected(connections: Int = 2, timeout: Duration = .seconds(20)) async throws {
        try await eventually("herald to connect (\(connections) connections)", timeout: timeout) {
            guard child.isRunning else { throw TestKitError("herald exited early:\n\(child.output)") }
            return child.output.components(separatedBy: "MQTT connected.").count - 1 >= connections
        }
    }

    /// The `herald` binary: `$HERALD_BINARY`, else the package's debug build.
    public static var binary: String {
        if let path = ProcessInfo.processInfo.environment["HERALD_BINARY"] {
            // Absolute, so tests that change directory (the scaffold check) still find it.
            return URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).standardizedFileURL.path
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/herald").path
    }
}

/// Builds a Herald YAML config for tests: one MQTT source and one MQTT sink on a test broker.
public struct TestConfiguration: Sendable {
    /// Broker port.
    public var port: Int
    /// SQLite path.
    public var storePath: String
    /// Source client id (persistent session).
    public var sourceClientID = "herald-test-ingest"
    /// Extra YAML lines inside the source section (indented by the caller with 4 spaces).
    public var sourceExtra = ""
    /// Extra top-level YAML.
    public var topLevelExtra = ""
    /// Extra YAML lines inside the `log:` section (indented by two spaces).
    public var logExtra = ""
    /// A PostgreSQL store URL (`store.url`) instead of the SQLite file.
    public var storeURL: String?
    /// Extra YAML lines inside the `store:` section (indented by two spaces).
    public var storeExtra = ""
    /// Durability.
    public var durability = "normal"
    /// The writer's page cache in MiB (`store.cache_mib`), or Herald's default.
    public var cacheMiB: Int?
    /// Port of the broker the sink publishes to (defaults to `port`).
    public var sinkPort: Int?
    /// Port of the admin API.
    public var adminPort: Int
    /// Extra YAML lines inside the `admin:` section (indented by two spaces).
    public var adminExtra = "  reconnect_budget_s: 0"
    /// Notifications and live messages through one MQTT sink (`push`), badges and receipts through a
    /// second (`state`, its own connection and outbox stream), instead of one sink for every output.
    public var splitSinks = false

    /// Creates a builder; the admin API gets a free port.
    public init(port: Int, storePath: String) {
        self.port = port
        self.storePath = storePath
        self.adminPort = (try? Loopback.freePort()) ?? 19464
    }

    /// The admin API's base URL.
    public var adminURL: String { "http://127.0.0.1:\(adminPort)" }

    /// The YAML text.
    public var yaml: String {
        """
        store:
          \(storeURL.map { "url: \($0)" } ?? "path: \(storePath)")
          durability: \(durability)\(storeURL == nil ? cacheMiB.map { "\n  cache_mib: \($0)" } ?? "" : "")\(storeExtra.isEmpty ? "" : "\n" + storeExtra)
        outbox:
          drain_timeout_s: 3
        log:
          level: info\(logExtra.isEmpty ? "" : "\n" + logExtra)
        admin:
          listen: 127.0.0.1:\(adminPort)
        \(adminExtra)
        sources:
          - name: broker
            type: mqtt
            url: mqtt://127.0.0.1:\(port)
            client_id: \(sourceClientID)
            keepalive: 10
        \(sourceExtra)
        sinks:
          - name: push
            type: mqtt
            url: mqtt://127.0.0.1:\(sinkPort ?? port)
            client_id: herald-test-push
            ack_timeout_s: 2
        \(splitSinks ? stateSink : "")
        \(topLevelExtra)
        """
    }

    /// With ``splitSinks``: what `push` publishes, then the second sink for badges and receipts.
    private var stateSink: String {
        """
            outputs: [notification, live_message]
          - name: state
            type: mqtt
            url: mqtt://127.0.0.1:\(sinkPort ?? port)
            client_id: herald-test-state
            ack_timeout_s: 2
            outputs: [badge, read_receipt]
        """
    }
}
