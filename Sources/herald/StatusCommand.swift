import ArgumentParser
import Foundation

/// `herald status`
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "One-screen summary of a running gateway: sources, rates over the last minute, outbox, DLQ, top chats.")

    @Option(help: "Admin API base URL.") var url: String?
    @Option(help: "File holding the admin bearer token.") var tokenFile: String?
    @Option(name: [.short, .long], help: "Config file used to find the admin address and token.") var config: String?

    func run() async throws {
        let client = try AdminClient.resolve(url: url, tokenFile: tokenFile,
                                             configPath: config ?? ProcessInfo.processInfo.environment["HERALD_CONFIG"] ?? "herald.yaml")
        let status: [String: Any]
        do {
            status = try await client.json("/v1/status")
        } catch let failure as AdminClient.Failure {
            FileHandle.standardError.write(Data("error: \(failure)\n".utf8))
            throw ExitCode(1)
        }
        let now = Date().timeIntervalSince1970 * 1000
        print("Herald \(status["version"] as? String ?? "?") at \(client.baseURL), instance \(status["instance"] as? String ?? "?")")
        print("\nSources")
        for source in status["sources"] as? [[String: Any]] ?? [] {
            let connected = source["connected"] as? Bool ?? false
            let since = (now - (source["since"] as? Double ?? now)) / 1000
            let state = source["standby"] as? Bool == true ? "standing by (another instance runs it)"
                : connected ? "connected" : "DISCONNECTED"
            print("  \(source["name"] as? String ?? "?")  \(state) for \(Int(since)) s")
            if let problem = source["problem"] as? String { print("    PROBLEM   \(problem)") }
            let checkpoints = (source["checkpoints"] as? [String: String] ?? [:]).sorted { $0.key < $1.key }
            if !checkpoints.isEmpty {
                print("    position  " + checkpoints.map { "\($0.key)=\($0.value)" }.joined(separator: "  "))
            }
        }
        let rates = status["rates_per_s"] as? [String: Any] ?? [:]
        let totals = status["totals"] as? [String: Any] ?? [:]
        print("\nLast minute  \(String(format: "%.1f", rates["applied"] as? Double ?? 0)) events/s applied, "
              + "\(String(format: "%.2f", rates["dead_lettered"] as? Double ?? 0)) dead-lettered/s")
        print("Since start  \(totals["applied"] ?? 0) applied, \(totals["duplicates"] ?? 0) duplicates, \(totals["dead_lettered"] ?? 0) dead-lettered, \(totals["outputs"] ?? 0) outputs")
        let about = status["messages_estimated"] as? Bool == true ? "about " : ""
        print("Store        \(about)\(status["messages"] ?? 0) messages, outbox \(status["outbox_depth"] ?? 0), dead letters \(status["dead_letters"] ?? 0)")
        if let store = status["store"] as? [String: String], let location = store["store"] {
            print("  at         \(location), durability \(store["durability"] ?? "unknown")")
        }
        let leases = status["leases"] as? [[String: Any]] ?? []
        if !leases.isEmpty {
            print("\nLeases (instances sharing the store)")
            for lease in leases {
                let mine = lease["mine"] as? Bool == true ? "  (this instance)" : ""
                print("  \(lease["name"] as? String ?? "?")  held by \(lease["holder"] as? String ?? "?")\(mine)")
            }
        }
        let top = status["top_chats_last_minute"] as? [[String: Any]] ?? []
        print("\nTop chats (last minute)")
        if top.isEmpty { print("  none") }
        for entry in top { print("  \(entry["chat"] as? String ?? "?")  \(entry["messages"] ?? 0) messages") }
    }
}
