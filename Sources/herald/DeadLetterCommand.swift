import ArgumentParser
import Foundation
import HeraldCore
import HeraldPostgres
import HeraldPluginAPI
import Metrics

/// `herald dlq`
struct DeadLetterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dlq",
        abstract: "Inspect, replay and purge the dead-letter queue.",
        subcommands: [List.self, Replay.self, Purge.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List dead-lettered inputs, oldest first: id, time, adapter, origin, reason, detail, size.")

        @OptionGroup var config: ConfigOption
        @Option(help: "Show at most this many.") var limit = 100
        @Flag(help: "Include rows already replayed.") var all = false
        @Flag(help: "One JSON object per line, with the raw payload as text.") var json = false

        func run() async throws {
            let configuration = try config.load()
            let store = try configuration.store.open(logger: makeLogger(level: .notice))
            let letters = try store.deadLetters(limit: limit, includeReplayed: all)
            if letters.isEmpty, !json { print("The dead-letter queue is empty.") }
            for letter in letters {
                let time = Date(timeIntervalSince1970: Double(letter.provenance.receivedAt.milliseconds) / 1000)
                if json {
                    let object: [String: Any] = [
                        "id": letter.id, "received_at": time.ISO8601Format(), "adapter": letter.provenance.adapter,
                        "origin": letter.provenance.origin, "reason": letter.rejection.reason.rawValue,
                        "detail": letter.rejection.detail, "size": letter.provenance.rawSize,
                        "payload": String(decoding: letter.raw, as: UTF8.self), "replayed": letter.replayedAt != nil,
                    ]
                    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
                    print(String(decoding: data, as: UTF8.self))
                } else {
                    print("\(letter.id)\t\(time.ISO8601Format())\t\(letter.provenance.adapter)\t\(letter.provenance.origin)\t"
                          + "\(letter.rejection.reason.rawValue)\t\(letter.rejection.detail)\t\(letter.provenance.rawSize) B"
                          + (letter.replayedAt != nil ? "\treplayed" : ""))
                }
            }
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-run dead-lettered inputs through the current config; those that now normalise are applied.",
            discussion: "Idempotent: applied events are deduplicated and replayed rows are skipped next time. Run it while the gateway is stopped or running.")

        @OptionGroup var config: ConfigOption
        @Option(help: "Only rows of this source.") var adapter: String?
        @Option(help: "Replay at most this many rows.") var limit = 10_000

        func run() async throws {
            let configuration = try config.load()
            let logger = makeLogger(level: .warning)
            let store = try configuration.store.open(logger: makeLogger(level: .notice))
            let router = try makeRouter(configuration, store: store, logger: logger)
            var normalisers: [String: any ReplayNormaliser] = [:]
            for section in configuration.sources { normalisers[section.name] = try section.settings.makeReplayNormaliser(name: section.name) }
            let summary = try DeadLetterReplayer(store: store, router: router, normalisers: normalisers, clock: SystemClock())
                .replay(limit: limit, adapter: adapter) { done, total in
                    // Long work says how far it is; a handful of rows needs no progress line.
                    guard total > DeadLetterReplayer.progressInterval else { return }
                    FileHandle.standardError.write(Data("Replaying dead letters: \(done) of \(total)\n".utf8))
                }
            print("Replayed \(summary.replayed); still failing \(summary.stillFailing.count); unknown adapter \(summary.unknownAdapter).")
            for failure in summary.stillFailing.prefix(20) { print("  \(failure.id): \(failure.rejection)") }
        }
    }
}
