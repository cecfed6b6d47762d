import ArgumentParser
import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldPostgres

/// `herald store migrate [--url URL] [--check]`
struct StoreMigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Create the store's schema, or apply the migrations it lacks, and exit.",
        discussion: """
            `herald run` does this itself at start when its role may. Where the gateway's PostgreSQL role may \
            only read and write rows, run this as the role that owns the schema before starting a new Herald, \
            with --url naming that role (its password from --password-file or $PGPASSWORD); `herald run` then \
            finds the schema current and checks that its own role has the privileges it needs. Several \
            instances may run it at once: migrations take an advisory lock. Exits 0 when the schema is current \
            afterwards, whether or not anything was applied.

            Without --url it works on the store the config names, SQLite or PostgreSQL.

            With --check it changes nothing: it lists the migrations the store lacks and exits 1 if there are \
            any, 0 if the schema is current (for a deployment pipeline, before a new Herald rolls out).
            """)

    @OptionGroup var config: ConfigOption

    @Option(help: ArgumentHelp("The PostgreSQL database and the role to migrate it as: postgres://USER@HOST:PORT/DATABASE[?sslmode=…] (default: the config's store.url).", valueName: "url"))
    var url: String?

    @Option(help: ArgumentHelp("With --url: a file whose first line is that role's password (default: $PGPASSWORD).", valueName: "file"))
    var passwordFile: String?

    @Option(help: ArgumentHelp("With --url: the schema of Herald's tables, as the gateway's store.schema names it (default: the server's search_path).", valueName: "name"))
    var schema: String?

    @Flag(help: "Change nothing: list the migrations the store lacks, and exit 1 if there are any.")
    var check = false

    func validate() throws {
        if url == nil, passwordFile != nil || schema != nil {
            throw ValidationError("--password-file and --schema go with --url; without it the config's store settings apply")
        }
    }

    func run() async throws {
        let logger = makeLogger(level: .warning)
        var section: StoreSection
        if let url {
            section = StoreSection()
            section.url = url
            section.passwordFile = passwordFile
            section.schema = schema
        } else {
            section = try config.load().store
        }
        let settings: PostgresStoreSettings?
        do throws(ConfigurationError) {
            settings = try section.postgresSettings(environment: ProcessInfo.processInfo.environment)
        } catch {
            guard url != nil else { throw ValidationError("store.\(error.keyPath): \(error.message)") }
            throw ValidationError("--\(error.keyPath.replacingOccurrences(of: "_", with: "-")): \(error.message)")
        }
        guard let settings else { return try check ? checkSQLite(section) : migrateSQLite(section) }
        if check {
            let pending = try PostgresChatStore.pendingMigrations(settings: settings, logger: logger)
            try report(pending: pending, in: "Herald's schema in \(settings)")
            return
        }
        let report = try PostgresChatStore.migrateSchema(settings: settings, logger: logger)
        if report.applied.isEmpty {
            print("Herald's schema in \(settings) is current (version \(report.version)).")
            return
        }
        print(report.created ? "Created Herald's schema, version \(report.version), in \(settings):"
              : "Migrated Herald's schema in \(settings) to version \(report.version):")
        for migration in report.applied { print("  \(migration)") }
    }

    /// Lists what the SQLite store lacks without opening it for writing.
    private func checkSQLite(_ section: StoreSection) throws {
        guard let check = try SQLiteChatStore.migrationCheck(path: section.path) else {
            print("There is no SQLite store at \(section.path) yet; `herald store migrate` or `herald run` creates it.")
            throw ExitCode(1)
        }
        guard check.unknown.isEmpty else {
            print("The SQLite store at \(section.path) has migrations this Herald does not know, from a newer one: \(check.unknown.joined(separator: ", ")).")
            throw ExitCode(1)
        }
        try report(pending: check.pending, in: "The SQLite store at \(section.path)")
    }

    /// Prints `pending` for `store`, and exits 1 when there are any.
    private func report(pending: [String], in store: String) throws {
        guard !pending.isEmpty else {
            print("\(store) is current.")
            return
        }
        print("\(store) lacks \(pending.count) migration\(pending.count == 1 ? "" : "s"); `herald store migrate` applies them:")
        for migration in pending { print("  \(migration)") }
        throw ExitCode(1)
    }

    /// Opens the SQLite store, which creates or migrates it.
    private func migrateSQLite(_ section: StoreSection) throws {
        let existed = FileManager.default.fileExists(atPath: section.path)
        var applied: [String] = []
        _ = try SQLiteChatStore(path: section.path, durability: section.durability, cacheMiB: section.cacheMiB) { applied = $0 }
        if !existed {
            print("Created the SQLite store at \(section.path).")
        } else if applied.isEmpty {
            print("The SQLite store at \(section.path) is current.")
        } else {
            print("Migrated the SQLite store at \(section.path):")
            for migration in applied { print("  \(migration)") }
        }
    }
}
