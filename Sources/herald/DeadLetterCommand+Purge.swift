import ArgumentParser
import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldPostgres

extension DeadLetterCommand {
    /// `herald dlq purge`
    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove dead letters: those replayed, those older than a time, those of one adapter.",
            discussion: """
                Every condition given must hold; with none it refuses, unless --all asks for every dead letter. \
                The oldest go first, in transactions of \(chunk) rows, so a running gateway's commits wait for \
                one at most. --dry-run counts what the conditions take and removes nothing.

                Durations: a number and a unit, s, m, h or d (30d, 12h).
                """)

        @OptionGroup var config: ConfigOption
        @Flag(help: "Only those replayed successfully.") var replayed = false
        @Option(help: ArgumentHelp("Only those received longer ago than this (30d, 12h, 90m).", valueName: "duration"))
        var olderThan: String?
        @Option(help: ArgumentHelp("Only those of this source, or of this sink for outputs it gave up on.", valueName: "name"))
        var adapter: String?
        @Flag(help: "Every dead letter, with no condition.") var all = false
        @Flag(help: "Count what would be purged; remove nothing.") var dryRun = false

        /// Rows removed per transaction.
        static let chunk = 10_000

        func validate() throws {
            if !replayed, olderThan == nil, adapter == nil, !all {
                throw ValidationError("name what to purge: --replayed, --older-than DURATION, --adapter NAME, or --all for everything")
            }
            if all, replayed || olderThan != nil || adapter != nil {
                throw ValidationError("--all takes every dead letter; leave it out to purge by condition")
            }
            if let olderThan, Self.milliseconds(olderThan) == nil {
                throw ValidationError("--older-than \(olderThan) is not a duration such as 30d, 12h, 90m or 45s")
            }
        }

        func run() async throws {
            let configuration = try config.load()
            let store = try configuration.store.open(logger: makeLogger(level: .notice))
            let now = SystemClock().now()
            let selection = DeadLetterSelection(replayedOnly: replayed, receivedBefore: olderThan.flatMap(Self.milliseconds).map {
                now.adding(milliseconds: -$0)
            }, adapter: adapter)
            if dryRun {
                print("Would purge \(try store.deadLetterCount(selection)) dead letters.")
                return
            }
            var purged = 0
            while true {
                let removed = try store.purgeDeadLetters(selection, limit: Self.chunk)
                purged += removed
                guard removed == Self.chunk else { break }
                FileHandle.standardError.write(Data("Purging dead letters: \(purged) so far\n".utf8))
            }
            print("Purged \(purged) dead letters; \(try store.openDeadLetterCount()) not replayed remain.")
        }

        /// `30d`, `12h`, `90m`, `45s` in milliseconds, or `nil`.
        static func milliseconds(_ text: String) -> Int64? {
            let units: [Character: Int64] = ["s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000]
            guard let unit = text.last.flatMap({ units[$0] }), let count = Int64(text.dropLast()), count >= 0 else { return nil }
            let (product, overflow) = count.multipliedReportingOverflow(by: unit)
            return overflow ? nil : product
        }
    }
}
