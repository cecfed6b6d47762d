import HeraldCore
import PostgresNIO

/// What one run of the migrations found and did.
public struct SchemaMigration: Sendable, Equatable {
    /// The schema's version afterwards.
    public let version: Int
    /// The migrations applied, oldest first, as "VERSION: NAME" (empty when the schema was current).
    public let applied: [String]
    /// Whether the database held no Herald schema before.
    public let created: Bool
}

extension PostgresSchema {
    /// Applies what is missing, holding the advisory lock, in `schema` (created first if it is missing;
    /// `nil`: the session's `search_path`); `willMigrate` hears the names of the
    /// migrations a store that had some already is about to get (a new store's are not announced).
    /// Waiting for another instance's migration, and a migration itself, may take longer than a
    /// statement may: the caller's session has no time limit.
    ///
    /// A current schema is only read, so a role that may read and write Herald's rows but not create
    /// tables starts on it; a role that may not apply a pending migration gets
    /// ``PostgresStoreError/migrationRefused(role:pending:detail:)``.
    @discardableResult
    static func migrate(_ session: PostgresSession, schema: String?, willMigrate: ([String]) -> Void) throws -> SchemaMigration {
        // The name goes into `CREATE SCHEMA` below as it is.
        if let schema, (try? PostgresStoreSettings.validateSchema(schema)) == nil {
            throw PostgresStoreError.statement("not a schema name Herald uses: \(schema)")
        }
        try session.query("SELECT pg_advisory_lock(\(migrationLock))")
        defer { _ = try? session.query("SELECT pg_advisory_unlock(\(migrationLock))") }
        // Without USAGE the schema drops out of the search path, and its tables look absent.
        if let schema, try session.isTrue("SELECT to_regnamespace(\(schema)) IS NOT NULL AND NOT has_schema_privilege(\(schema), 'USAGE')") {
            throw PostgresStoreError.missingPrivileges(role: try currentRole(session), missing: ["USAGE on schema \(schema)"])
        }
        let applied = try checkedAppliedVersions(session)
        let pending = migrations.filter { !applied.contains($0.version) }
        let report = SchemaMigration(version: knownVersion, applied: pending.map { "\($0.version): \($0.name)" }, created: applied.isEmpty)
        guard !pending.isEmpty else { return report }
        if !applied.isEmpty { willMigrate(pending.map(\.name)) }
        do {
            // Only when missing: `CREATE SCHEMA IF NOT EXISTS` asks for the database's CREATE privilege first.
            if let schema, try session.isTrue("SELECT to_regnamespace(\(schema)) IS NULL") {
                try session.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(schema)"))
            }
            try session.query("""
                CREATE TABLE IF NOT EXISTS herald_schema_migrations (
                    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                """)
            for migration in pending {
                try session.query("BEGIN")
                do {
                    for statement in migration.sql { try session.query(PostgresQuery(unsafeSQL: statement)) }
                    try session.query("INSERT INTO herald_schema_migrations (version, name) VALUES (\(migration.version), \(migration.name))")
                    try session.query("COMMIT")
                } catch {
                    _ = try? session.query("ROLLBACK")
                    throw error
                }
            }
        } catch let error as PostgresStoreError {
            guard case .statement(let detail) = error, error.isPermissionDenied else { throw error }
            throw PostgresStoreError.migrationRefused(role: try currentRole(session), pending: pending.map(\.version), detail: detail)
        }
        return report
    }

    /// The migrations the schema lacks, as "VERSION: NAME", read without the lock and without creating
    /// anything (`herald store migrate --check`); a schema newer than this binary is an error, as at start.
    static func pendingMigrations(_ session: PostgresSession) throws -> [String] {
        let applied = try checkedAppliedVersions(session)
        return migrations.filter { !applied.contains($0.version) }.map { "\($0.version): \($0.name)" }
    }

    /// ``appliedVersions(_:)``, with what the role lacks when it may not read them, and refused when the
    /// schema is newer than this binary.
    private static func checkedAppliedVersions(_ session: PostgresSession) throws -> Set<Int> {
        let applied: Set<Int>
        do {
            applied = try appliedVersions(session)
        } catch let error as PostgresStoreError where error.isPermissionDenied {
            throw PostgresStoreError.missingPrivileges(role: try currentRole(session), missing: try missingPrivileges(session))
        }
        if let newest = applied.max(), newest > knownVersion { throw PostgresStoreError.schemaTooNew(found: newest, known: knownVersion) }
        return applied
    }

    /// The versions applied so far, read without creating anything: empty in a database without Herald's
    /// schema.
    static func appliedVersions(_ session: PostgresSession) throws -> Set<Int> {
        guard try session.isTrue("SELECT to_regclass('herald_schema_migrations') IS NOT NULL") else { return [] }
        var applied: Set<Int> = []
        for row in try session.query("SELECT version FROM herald_schema_migrations") {
            applied.insert(try row.decode(Int.self))
        }
        return applied
    }

    /// The tables whose rows `herald run` reads and writes.
    static var rowTables: [String] { StoreTable.all.map(\.postgres) + ["outbox_packs", "leases"] }

    /// What the session's role lacks of the privileges the gateway needs: reading and writing rows in
    /// ``rowTables``, reading the migrations, drawing from the tables' sequences and calling Herald's
    /// functions. One entry per set of privileges, as "SELECT, INSERT on TABLE, TABLE"; empty when it has
    /// them all.
    static func missingPrivileges(_ session: PostgresSession) throws -> [String] {
        let rows = try session.query("""
            WITH missing (object, privilege) AS (
                SELECT t, p FROM unnest(\(rowTables)::text[]) AS t CROSS JOIN unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE']) AS p
                    WHERE NOT has_table_privilege(t, p)
                UNION ALL SELECT 'herald_schema_migrations', 'SELECT' WHERE NOT has_table_privilege('herald_schema_migrations', 'SELECT')
                UNION ALL SELECT s, 'USAGE' FROM (
                    SELECT pg_get_serial_sequence(k.t, k.c) AS s FROM unnest(ARRAY['messages', 'outbox_packs', 'dead_letters'], ARRAY['seq', 'seq', 'id']) AS k(t, c)) AS q
                    WHERE NOT has_sequence_privilege(s, 'USAGE')
                UNION ALL SELECT p.proname || '()', 'EXECUTE' FROM pg_proc p
                    WHERE p.proname = ANY(\(PostgresReadFunctions.gatewayFunctions)::text[])
                    AND pg_function_is_visible(p.oid) AND NOT has_function_privilege(p.oid, 'EXECUTE')),
            per_object AS (
                SELECT object, string_agg(privilege, ', ' ORDER BY array_position(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE'], privilege)) AS privileges
                FROM missing GROUP BY object)
            SELECT privileges || ' on ' || string_agg(object, ', ' ORDER BY object) FROM per_object GROUP BY privileges ORDER BY 1
            """)
        return try rows.map { try $0.decode(String.self) }
    }

    /// The role the session acts as.
    static func currentRole(_ session: PostgresSession) throws -> String {
        try session.query("SELECT current_user::text").map { try $0.decode(String.self) }.first ?? "?"
    }
}
