import Foundation
import GRDB
import HeraldTestKit
import Testing

/// `herald store migrate` on the embedded SQLite store; the PostgreSQL side runs in ``PostgresRolesTests``.
@Suite("herald store migrate on SQLite")
struct StoreMigrateTests {
    /// `--check` lists what the store lacks and changes nothing; a store a newer Herald migrated is refused.
    @Test func checkListsWhatTheStoreLacksAndANewerStoreIsRefused() async throws {
        let fixture = try await GatewayFixture()
        let path = fixture.configuration.storePath
        let missing = try await fixture.cli(["store", "migrate", "--check"])
        #expect(missing.status == 1 && missing.output.contains("There is no SQLite store at \(path) yet"), "\(missing.output)")
        #expect(!FileManager.default.fileExists(atPath: path), "--check creates nothing")

        let created = try await fixture.cli(["store", "migrate"])
        #expect(created.status == 0 && created.output.contains("Created the SQLite store at \(path)."), "\(created.output)")
        let current = try await fixture.cli(["store", "migrate", "--check"])
        #expect(current.status == 0 && current.output.contains("The SQLite store at \(path) is current."), "\(current.output)")

        // A store an older Herald left: its newest migration not recorded.
        let newest = try await DatabaseQueue(path: path).write { db in
            let identifier = try String.fetchOne(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid DESC LIMIT 1") ?? ""
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = ?", arguments: [identifier])
            return identifier
        }
        let behind = try await fixture.cli(["store", "migrate", "--check"])
        #expect(behind.status == 1 && behind.output.contains("The SQLite store at \(path) lacks 1 migration; `herald store migrate` applies them:")
                && behind.output.contains("  \(newest)"), "\(behind.output)")

        // A store a newer Herald migrated: a rollback needs the backup.
        try await DatabaseQueue(path: path).write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?), ('zz-from-a-newer-herald')", arguments: [newest])
        }
        let ahead = try await fixture.cli(["store", "migrate", "--check"])
        #expect(ahead.status == 1 && ahead.output.contains("has migrations this Herald does not know, from a newer one: zz-from-a-newer-herald."),
                "\(ahead.output)")
        // Neither the gateway nor a migration runs on it.
        for command in [["run"], ["store", "migrate"]] {
            let refused = try await fixture.cli(command)
            #expect(refused.status != 0 && refused.output.contains("the SQLite store \(path) was migrated by a newer Herald (zz-from-a-newer-herald)"),
                    "\(command): \(refused.output)")
        }
    }
}
