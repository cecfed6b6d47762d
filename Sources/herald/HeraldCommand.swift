import ArgumentParser
import Foundation
import HeraldCore

/// `herald`: the command-line entry point.
@main
struct HeraldCommand: AsyncParsableCommand {
    static let version = HeraldVersion.current

    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Message ingestion gateway for chat systems.",
        discussion: """
            Herald takes chat events in from sources (MQTT brokers, HTTP posts, WebSocket streams, polled REST endpoints, \
            plugin processes), normalises them into source-agnostic events (message.received, messages.read, \
            chat.created, chat.opened/closed), applies each batch to the chat store (a SQLite file, or PostgreSQL) \
            in one transaction with the outputs it produces, and delivers those outputs (notifications, live \
            messages, read receipts, badges) through sinks (MQTT, signed webhooks).

            Start: `make run` in the source tree, or `herald run --config FILE`. Every config key: \
            docs/configuration.md (or `herald adapters`); operations: docs/operations.md.
            """,
        version: version,
        subcommands: [RunCommand.self, CheckCommand.self, TailCommand.self, StatusCommand.self, DeadLetterCommand.self, BadgeCommand.self,
                      StoreCommand.self,
                      AdaptersCommand.self, NewAdapterCommand.self],
        defaultSubcommand: nil)

    /// Limits glibc's malloc arenas (``MallocTuning``) while the main thread is still the only one, then
    /// parses the command line and runs the command. Set later, from the command, the limit would come
    /// after the threads that parsed it had allocated, and a thread that met another in the allocator by
    /// then would already have an arena of its own.
    static func main() async {
        MallocTuning.applyArenaLimit(environment: ProcessInfo.processInfo.environment)
        await main(nil)
    }
}
