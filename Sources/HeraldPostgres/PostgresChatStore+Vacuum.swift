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
                WHERE c.oid = to_regclass('outbox')
                """)
        }
    }

    /// Outbox entries removed since the last ``vacuumOutbox()``.
    var outboxEntriesRemovedSinceVacuum: Int { removedSinceVacuum.load(ordering: .relaxed) }

    /// `VACUUM (SKIP_LOCKED) outbox` on the maintenance connection, without the statement timeout: the
    /// entries the dispatchers removed leave the table's index, which each read from the start of a sink's
    /// entries walks over until then. Skips the table, without waiting, while autovacuum holds it.
    func vacuumOutbox() throws {
        let removed = removedSinceVacuum.load(ordering: .relaxed)
        _ = try maintenance.withConnection(unlimited: true) { session in try session.execute("VACUUM (SKIP_LOCKED) outbox") }
        removedSinceVacuum.subtract(removed, ordering: .relaxed)
    }
}
