import HeraldCore
import PostgresNIO
import Synchronization

extension PostgresChatStore {
    /// Whether the store's role may vacuum the outbox: it owns the table (it created the schema) or is a
    /// superuser. Otherwise `VACUUM` would only warn and skip it.
    public func mayVacuumOutbox() throws -> Bool {
        try maintenance.withConnection { session in
            try session.isTrue("""
                SELECT pg_has_role(current_user, c.relowner, 'USAGE') FROM pg_class c
                WHERE c.oid = to_regclass('outbox_packs')
                """)
        }
    }

    /// Outbox entries delivered since the last ``vacuumOutbox()``.
    var outboxEntriesRemovedSinceVacuum: Int { removedSinceVacuum.load(ordering: .relaxed) }

    /// `VACUUM (SKIP_LOCKED) outbox_packs` on the maintenance connection, without the statement timeout:
    /// the packs the dispatchers removed or changed leave the table's index, which each read from the start
    /// of a sink's packs walks over until then. Skips the table, without waiting, while autovacuum holds it.
    func vacuumOutbox() throws {
        let removed = removedSinceVacuum.load(ordering: .relaxed)
        _ = try maintenance.withConnection(unlimited: true) { session in try session.execute("VACUUM (SKIP_LOCKED) outbox_packs") }
        removedSinceVacuum.subtract(removed, ordering: .relaxed)
    }
}
