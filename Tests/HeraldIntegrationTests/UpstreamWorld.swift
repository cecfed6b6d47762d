import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit

/// A test world for the HTTP-based adapters: a temporary directory, a store, an admin port and the
/// real `herald` binary run with the given `sources:` / `sinks:` YAML.
final class UpstreamWorld: @unchecked Sendable {
    let directory: TemporaryDirectory
    let storePath: String
    let adminPort: Int
    private(set) var herald: HeraldProcess?
    private var runs = 0
    var configPath: String { directory.path("herald.yaml") }

    init(prefix: String) throws {
        directory = try TemporaryDirectory(prefix: prefix)
        storePath = directory.path("store.sqlite")
        adminPort = try Loopback.freePort()
    }

    /// Writes the config: `sections` is the YAML of `sources:` and optionally `sinks:`.
    func configure(_ sections: String) throws {
        _ = try directory.write("herald.yaml", """
            store:
              path: \(storePath)
              durability: normal
            admin:
              listen: 127.0.0.1:\(adminPort)
            \(sections)
            """)
    }

    /// Starts `herald run`.
    @discardableResult
    func start() throws -> HeraldProcess {
        runs += 1
        let process = try HeraldProcess(configPath: configPath, logPath: directory.path("herald-\(runs).log"))
        herald = process
        return process
    }

    /// Waits until the store holds `count` messages.
    func waitForMessages(_ count: Int, timeout: Duration = .seconds(30)) async throws {
        try await waitFor("\(count) messages stored", timeout: timeout) {
            try store().statistics().messages >= count
        }
    }

    /// Waits until the current run's log contains `text` at least `count` times.
    func waitForLog(_ text: String, count: Int = 1, timeout: Duration = .seconds(30)) async throws {
        try await waitFor("log line \"\(text)\" ×\(count)", timeout: timeout) {
            (logs.components(separatedBy: text).count - 1) >= count
        }
    }

    /// Waits for `condition` while the gateway runs; a gateway that exits, or a timeout, fails the wait
    /// with the gateway's log.
    func waitFor(_ what: String, timeout: Duration = .seconds(60), _ condition: () async throws -> Bool) async throws {
        do {
            try await eventually(what, timeout: timeout) {
                if let herald, !herald.child.isRunning { throw TestKitError("herald exited while waiting for: \(what)") }
                return try await condition()
            }
        } catch {
            throw TestKitError("\(error)\n--- herald log ---\n\(logs)")
        }
    }

    /// Opens the store (WAL: reading never blocks the gateway).
    func store() throws -> SQLiteChatStore { try SQLiteChatStore(path: storePath, durability: .normal) }

    /// The current run's log.
    var logs: String { herald?.child.output ?? "" }

    /// The value of a Prometheus sample line starting with `prefix` (labels included), or 0.
    func metric(_ prefix: String) throws -> Double {
        let text = try Loopback.get(port: adminPort, path: "/metrics")
        for line in text.split(separator: "\n") where line.hasPrefix(prefix) {
            return Double(line.split(separator: " ").last ?? "0") ?? 0
        }
        return 0
    }

    /// Stops the gateway with SIGTERM and waits for it.
    func stop() async throws {
        guard let herald else { return }
        herald.child.signal(SIGTERM)
        _ = try await herald.child.waitForExit()
    }
}

/// Upstream events in Herald's feed shape.
enum FeedEvents {
    /// `chat.created` for chat `c1` with alice and bob, then `count` messages from alice.
    static func conversation(_ count: Int, chat: String = "c1", start: Int = 0) -> [[String: Any]] {
        var events: [[String: Any]] = start == 0 ? [["type": "chat.created", "chat": chat, "members": ["alice", "bob"]]] : []
        for index in start..<(start + count) {
            events.append(["type": "message.received", "chat": chat, "id": "m\(index)", "from": "alice", "body": "hello \(index)",
                           "sent_at": 1_763_800_000_000 + index])
        }
        return events
    }
}
