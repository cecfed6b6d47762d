import ArgumentParser
import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldPostgres

/// `herald store …`
struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Work on chat stores.",
        subcommands: [StoreMigrateCommand.self, StoreCopyCommand.self, StoreVerifyCommand.self])
}

/// `herald store copy --from PATH --to URL`
struct StoreCopyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy a SQLite store into an empty PostgreSQL database.",
        discussion: """
            Copies messages, memberships, read positions, unread counters, presence, waiting reads, the \
            undelivered outbox, dead letters and source checkpoints, in their order, from one consistent \
            snapshot of the SQLite file (stop the gateway first so nothing arrives after it). The PostgreSQL \
            schema is created or migrated first; a target that already holds messages is refused. Progress goes \
            to standard error; the summary compares each table's rows in both stores and exits 1 if any differ.

            The password comes from --password-file or $PGPASSWORD, never from the URL.
            """)

    @Option(help: ArgumentHelp("The SQLite store file.", valueName: "path"))
    var from: String

    @Option(help: ArgumentHelp("The PostgreSQL database: postgres://USER@HOST:PORT/DATABASE[?sslmode=…].", valueName: "url"))
    var to: String

    @Option(help: ArgumentHelp("A file whose first line is the PostgreSQL password.", valueName: "file"))
    var passwordFile: String?

    @Option(help: ArgumentHelp("The schema to copy into, as the gateway's store.schema names it (default: the server's search_path).", valueName: "name"))
    var schema: String?

    @Option(help: "Rows per statement.")
    var chunk = 5_000

    func run() async throws {
        let logger = makeLogger(level: .notice)
        guard FileManager.default.fileExists(atPath: from) else { throw ValidationError("no SQLite store at \(from)") }
        var section = StoreSection()
        section.url = to
        section.passwordFile = passwordFile
        section.schema = schema
        let settings: PostgresStoreSettings
        do throws(ConfigurationError) {
            guard let parsed = try section.postgresSettings(environment: ProcessInfo.processInfo.environment) else { return }
            settings = parsed
        } catch {
            throw ValidationError("--\(["url": "to", "password_file": "password-file"][error.keyPath] ?? error.keyPath): \(error.message)")
        }
        let source = try section.openSQLiteStore(at: from, logger: logger)
        let target = try PostgresChatStore(settings: settings, logger: logger)
        let existing = try target.count(StoreTable.all[0])
        guard existing == 0 else {
            throw ValidationError("\(settings) already holds \(existing) messages; copy into an empty database")
        }
        let started = ContinuousClock.now
        var mismatches = 0
        for table in StoreTable.all {
            let total = try source.count(table)
            var copied = 0
            try source.export(table, chunk: max(1, chunk)) { rows in
                try target.importRows(table, rows)
                copied += rows.count
                if total > chunk { progress("\(table.sqlite): \(copied) / \(total)") }
            }
            let landed = try target.count(table)
            if landed != total { mismatches += 1 }
            let unit = table.holdsOutputs ? "outputs" : "rows"
            print("\(table.sqlite.padding(toLength: 20, withPad: " ", startingAt: 0)) \(total) \(unit) → \(table.postgres): \(landed)\(landed == total ? "" : "  MISMATCH")")
        }
        let seconds = Double((ContinuousClock.now - started).components.seconds)
        print("Copied \(from) to \(settings) in \(Int(seconds)) s.")
        if mismatches > 0 { throw ExitCode(1) }
    }

    private func progress(_ line: String) {
        FileHandle.standardError.write(Data("  \(line)\n".utf8))
    }
}
