import Foundation
public import HeraldCore
public import HeraldPluginAPI
public import Logging
public import CoreMetrics
import NIOCore
import PostgresNIO
import Synchronization

/// The PostgreSQL chat store: the same set-based transaction as the SQLite store's (a state slice in,
/// a delta out), over postgres-nio. The router's writes go through one connection and take a small,
/// fixed number of statements per batch whatever its size; reads (badges, outbox, status) go through
/// another, so a sink never waits for a commit.
public final class PostgresChatStore: ChatStore {
    /// Where the store lives (without its password).
    public let settings: PostgresStoreSettings
    let writer: PostgresLink
    let reader: PostgresLink
    /// The outbox's upkeep (``OutboxVacuum``), apart from the reads a sink waits for.
    let maintenance: PostgresLink
    /// Outbox entries removed since the outbox was last vacuumed (``OutboxVacuum``).
    let removedSinceVacuum = Atomic<Int>(0)
    /// The payload of this store's `NOTIFY herald_outbox`: its own listener skips them, because the
    /// router wakes this instance's dispatchers itself after each commit.
    let notificationPayload = UUID().uuidString
    private let lastWrite = Atomic<Int>(0)
    /// Where the connections' metrics go; the outbox listener's too.
    let metrics: any MetricsFactory

    /// Connects, checks the schema and applies missing migrations (under an advisory lock), then checks
    /// that the role may read and write every table the gateway uses.
    /// `willMigrate` hears the migrations an existing store is about to get, before they run; `metrics`
    /// hears of the connections (``StoreConnectionMetrics``).
    public init(settings: PostgresStoreSettings, logger: Logger, metrics: any MetricsFactory = NOOPMetricsHandler.instance,
                willMigrate: ([String]) -> Void = { _ in }) throws {
        self.settings = settings
        self.metrics = metrics
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .warning)
        writer = PostgresLink(settings: settings, role: "writer", logger: quiet, metrics: metrics)
        reader = PostgresLink(settings: settings, role: "reader", logger: quiet, metrics: metrics)
        maintenance = PostgresLink(settings: settings, role: "maintenance", logger: quiet, metrics: metrics)
        try writer.withConnection(unlimited: true) { session in
            try PostgresSchema.migrate(session, schema: settings.schema, willMigrate: willMigrate)
            let missing = try PostgresSchema.missingPrivileges(session)
            guard missing.isEmpty else {
                throw PostgresStoreError.missingPrivileges(role: try PostgresSchema.currentRole(session), missing: missing)
            }
        }
    }

    /// Creates the schema in the database `settings` name, or applies the migrations it lacks, and
    /// closes the connection: `herald store migrate`, for a role that owns the schema while the gateway
    /// runs as one that may only read and write rows.
    public static func migrateSchema(settings: PostgresStoreSettings, logger: Logger) throws -> SchemaMigration {
        let link = PostgresLink(settings: settings, role: "migration", logger: logger)
        defer { link.close() }
        return try link.withConnection(unlimited: true) { session in try PostgresSchema.migrate(session, schema: settings.schema) { _ in } }
    }

    /// The migrations the schema in the database `settings` name lacks, as "VERSION: NAME", read without
    /// changing anything: `herald store migrate --check`.
    public static func pendingMigrations(settings: PostgresStoreSettings, logger: Logger) throws -> [String] {
        let link = PostgresLink(settings: settings, role: "migration", logger: logger)
        defer { link.close() }
        return try link.withConnection { session in try PostgresSchema.pendingMigrations(session) }
    }

    deinit {
        writer.close()
        reader.close()
        maintenance.close()
    }

    /// Statements the last write transaction sent, from BEGIN to COMMIT: a batch costs the same number
    /// whatever its size.
    public var statementsInLastWrite: Int? { lastWrite.load(ordering: .relaxed) }

    /// Runs `body` in one transaction on the writer connection.
    public func write<T>(_ body: (any ChatTransaction) throws -> T) throws -> T {
        try writer.withConnection { session in
            try session.query("BEGIN")
            do {
                let result = try body(PostgresTransaction(session: session, notificationPayload: notificationPayload,
                                                          outboxChannel: settings.outboxChannel))
                try session.query("COMMIT")
                lastWrite.store(session.statements, ordering: .relaxed)
                return result
            } catch {
                _ = try? session.query("ROLLBACK")
                if let error = error as? PostgresStoreError, error.isRetryable { throw StoreConflict(error.description) }
                throw error
            }
        }
    }

    /// Whether the writer's server accepts writes: a primary demoted under an open connection still
    /// commits an empty transaction, but its `transaction_read_only` is on. The connection is closed then
    /// (``PostgresLink``), and the next one looks for a server that accepts writes.
    public func checkWritable() throws {
        try writer.withConnection { session in try session.refuseIfReadOnly(settings) }
    }

    /// Runs `body` on the reader connection; `unlimited` lifts the statement timeout (a full count for
    /// `herald store copy`).
    @discardableResult
    func read<T>(unlimited: Bool = false, _ body: (PostgresSession) throws -> T) throws -> T {
        try reader.withConnection(unlimited: unlimited, body)
    }

    /// A user's badge from committed data.
    public func badge(for user: UserID) throws -> BadgeUpdate {
        try badges(for: [user])[user] ?? BadgeUpdate(recipient: user, unread: 0, chats: [:])
    }

    /// The badges of `users` from committed data, in one query.
    public func badges(for users: [UserID]) throws -> [UserID: BadgeUpdate] {
        var badges: [UserID: BadgeUpdate] = [:]
        for user in users { badges[user] = BadgeUpdate(recipient: user, unread: 0, chats: [:]) }
        guard !users.isEmpty else { return badges }
        let names = users.map(\.rawValue)
        try read { session in
            for row in try session.query("SELECT user_id, chat, unread FROM unread_counters WHERE user_id = ANY(\(names)) AND unread <> 0") {
                let (user, chat, count) = try row.decode((String, String, Int).self)
                badges[UserID(user)]?.chats[ChatID(chat)] = count
                badges[UserID(user)]?.unread += count
            }
        }
        return badges
    }

    /// Row counts of committed data.
    public func statistics() throws -> StoreStatistics {
        try read { session in
            let rows = try session.query("""
                SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM dead_letters WHERE replayed_at IS NULL),
                       (SELECT coalesce(sum(outputs - delivered), 0)::int8 FROM outbox_packs)
                """)
            for row in rows {
                let (messages, letters, outbox) = try row.decode((Int, Int, Int).self)
                return StoreStatistics(messages: messages, deadLetters: letters, outbox: outbox)
            }
            return StoreStatistics(messages: 0, deadLetters: 0, outbox: 0)
        }
    }
}
