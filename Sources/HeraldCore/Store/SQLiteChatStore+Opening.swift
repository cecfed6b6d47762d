import Foundation
import GRDB

extension SQLiteChatStore {
    /// How often opening is tried when other connections are creating or migrating the same store.
    /// Each lost race means another connection applied at least one migration, so this covers every
    /// migration being won by someone else, with room to spare.
    static var openingAttempts: Int { migrator.migrations.count + 5 }

    /// Opens the pool, sets the durability and applies pending migrations.
    ///
    /// Two processes may open the same new store at the same moment (`herald run` and a `herald dlq list`,
    /// or a gateway and a tool that reads its store). GRDB's migrator reads the applied migrations before
    /// it takes the write lock, so both may try the same migration; the loser fails with "table already
    /// exists" (or a unique-key violation on `grdb_migrations`), and switching a new file to WAL fails with
    /// SQLITE_BUSY while another connection does the same. Either is retried after a short, jittered
    /// pause: the retry sees what the winner applied and goes on from there. Any other error, or a
    /// failure while nobody else made progress, is thrown as it is.
    static func openMigrated(path: String, configuration: Configuration, durability: Durability, readOnly: Bool,
                             willMigrate: (_ pending: [String]) -> Void) throws -> DatabasePool {
        var announced = false
        var attempt = 0
        while true {
            attempt += 1
            var pool: DatabasePool?
            var appliedBefore: Set<String> = []
            do {
                let opened = try DatabasePool(path: path, configuration: configuration)
                pool = opened
                if readOnly { return opened }
                // GRDB's pool switches the writer to WAL *after* `prepareDatabase` and sets `synchronous = NORMAL`
                // as it does, so the durability is applied here, once the pool is open.
                try opened.writeWithoutTransaction { db in
                    try db.execute(sql: "PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL")")
                }
                appliedBefore = try opened.read { db in try migrator.appliedIdentifiers(db) }
                // An older Herald on a newer store would write rows the newer schema does not expect.
                let unknown = appliedBefore.subtracting(migrator.migrations)
                guard unknown.isEmpty else { throw SQLiteStoreError.newerThanBinary(path: path, unknown: unknown.sorted()) }
                let pending = migrator.migrations.filter { !appliedBefore.contains($0) }
                // A new store's migrations are not announced: they rewrite nothing.
                if !announced, !appliedBefore.isEmpty, !pending.isEmpty {
                    announced = true
                    willMigrate(pending)
                }
                try migrator.migrate(opened)
                return opened
            } catch let error as DatabaseError where attempt < openingAttempts
                        && lostOpeningRace(error, pool: pool, appliedBefore: appliedBefore) {
                Thread.sleep(forTimeInterval: Double.random(in: 0.005...0.05))
            }
        }
    }

    /// What the store at `path` lacks and what a newer Herald applied to it that this one does not know, by
    /// name, read without changing the file; `nil` when there is no file (opening it creates the store).
    /// `herald store migrate --check`.
    public static func migrationCheck(path: String) throws -> (pending: [String], unknown: [String])? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        return try queue.read { db in
            let applied = try migrator.appliedIdentifiers(db)
            return (migrator.migrations.filter { !applied.contains($0) }, applied.subtracting(migrator.migrations).sorted())
        }
    }

    /// Whether `error` came from another connection creating or migrating the store at the same time: a
    /// busy file while the pool opened (switching a new file to WAL), or any failure of a migration that
    /// another connection applied meanwhile. A store some other writer keeps locked past the busy timeout
    /// fails once, as before; a broken migration is not retried.
    private static func lostOpeningRace(_ error: DatabaseError, pool: DatabasePool?, appliedBefore: Set<String>) -> Bool {
        guard let pool else { return error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED }
        guard let applied = try? pool.read({ db in try migrator.appliedIdentifiers(db) }) else { return false }
        return applied.count > appliedBefore.count
    }
}
