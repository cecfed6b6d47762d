import ArgumentParser
import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldPostgres

/// `herald store verify [--repair]`
struct StoreVerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every unread counter against a recount of the stored messages; --repair sets those that differ.",
        discussion: """
            Recounts, for every member of every chat and every counter the store holds, the chat's stored \
            messages after the user's read position that the user did not send, and lists the counters that \
            differ (a restored backup or an edit by hand can leave them so; the gateway itself keeps them equal). \
            Exits 1 when any differ, so a timer or a monitoring check can run it.

            With --repair the router sets each of them to a recount taken inside its write transaction and \
            queues the user's new badge for the sinks, which the running gateway delivers. It is safe while the \
            gateway runs, and repeating it changes nothing.
            """)

    @OptionGroup var config: ConfigOption

    @Flag(help: "Set the counters that differ to the recount and queue their users' badges.")
    var repair = false

    @Option(help: ArgumentHelp("Counters to list at most.", valueName: "n"))
    var show = 20

    /// Counters repaired per transaction.
    static let repairChunk = 1_000

    func run() async throws {
        let configuration = try config.load()
        let store = try configuration.store.open(logger: makeLogger(level: .notice))
        FileHandle.standardError.write(Data("Recounting every unread counter from the stored messages…\n".utf8))
        let drift = try store.unreadDrift()
        let drifted = drift.differing
        guard !drifted.isEmpty else {
            print("All \(drift.counters) unread counters of \(drift.users) users equal a recount of the stored messages.")
            return
        }
        print("\(drifted.count) of \(drift.counters) unread counters differ from a recount of the stored messages:")
        print(Self.table(Array(drifted.prefix(max(0, show)))))
        if drifted.count > show { print("  … and \(drifted.count - show) more") }
        guard repair else {
            print("Run it again with --repair to set them to the recount and send their users' badges.")
            throw ExitCode(1)
        }

        let router = try makeRouter(configuration, store: store, logger: makeLogger(level: .warning))
        var repaired: [CounterDrift] = []
        var done = 0
        for start in stride(from: 0, to: drifted.count, by: Self.repairChunk) {
            let chunk = drifted[start..<min(start + Self.repairChunk, drifted.count)]
            repaired += try router.recountUnread(chunk.map { ($0.user, $0.chat) })
            done += chunk.count
            if drifted.count > Self.repairChunk {
                FileHandle.standardError.write(Data("Repairing: \(done) of \(drifted.count)\n".utf8))
            }
        }
        let sinks = configuration.sinks.map(\.name).joined(separator: ", ")
        print("Repaired \(repaired.count) counters of \(Set(repaired.map(\.user)).count) users; their badges are queued"
              + (sinks.isEmpty ? " (no sink is configured)." : " for \(sinks)."))
        if repaired.count < drifted.count {
            print("\(drifted.count - repaired.count) had changed meanwhile and needed no repair.")
        }
    }

    /// Rows under a header, in columns.
    static func table(_ rows: [CounterDrift]) -> String {
        let lines = [["user", "chat", "stored", "recount"]] + rows.map { [$0.user.rawValue, $0.chat.rawValue, "\($0.stored)", "\($0.recounted)"] }
        let widths = (0..<4).map { column in lines.map { $0[column].count }.max() ?? 0 }
        return lines.map { line in
            "  " + line.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n")
    }
}
