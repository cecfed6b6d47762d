import Foundation
import GRDB
public import HeraldPluginAPI

/// The SQLite chat store: one file in WAL mode, one writer, readers that never block it.
public final class SQLiteChatStore: ChatStoreInspection {
    /// How hard SQLite syncs each commit.
    public enum Durability: String, Sendable, Codable, CaseIterable {
        /// fsync on every commit: survives power loss.
        case full
        /// fsync at checkpoints: survives process crashes (`kill -9`), may lose the last commits on power loss.
        case normal
    }

    let pool: DatabasePool
    /// The writer connection's kept statements.
    let writerStatements = WriterStatements()
    let readOnly: Bool
    /// With `durability: full`, the sync of the log after each commit (``WALSync``); `nil` otherwise.
    let walSync: WALSync?
    /// The database file.
    public let path: String

    /// The writer's page cache unless configured (`store.cache_mib`): it holds the pages most commits touch
    /// (each chat's newest message and index pages, badges, the outbox's end). Measured with 200,000
    /// messages over 1,000 chats: with the MQTT source's batches of 8,000, 4 MiB drained a backlog as fast
    /// as 8 MiB within the noise (so did the WebSocket and REST sources) and kept peak RSS 4–5 MiB lower.
    /// With batches of 3,000, 4 MiB had cost about 10% more CPU per message than 8.
    public static let defaultCacheMiB = 4

    /// Opens (creating if needed) and migrates the store at `path`, with a writer page cache of `cacheMiB`.
    /// `willMigrate` hears the migrations an existing store is about to get (not a new store's), before
    /// they run: some rewrite a whole table.
    public init(path: String, durability: Durability = .full, cacheMiB: Int = defaultCacheMiB, readOnly: Bool = false,
                willMigrate: (_ pending: [String]) -> Void = { _ in }) throws {
        var configuration = Configuration()
        configuration.readonly = readOnly
        configuration.busyMode = .timeout(10)
        configuration.maximumReaderCount = 2
        configuration.prepareDatabase { db in
            if db.configuration.readonly {
                try db.execute(sql: "PRAGMA cache_size = -2048")
            } else {
                // Checkpoints never run inside a commit (see checkpointWAL).
                try db.execute(sql: "PRAGMA cache_size = -\(max(1, cacheMiB) * 1024)")
                try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            }
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        if !readOnly {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw SQLiteStoreError.cannotCreateDirectory(directory: directory, detail: SQLiteStoreError.reason(error))
            }
        }
        self.path = path
        do {
            self.pool = try Self.openMigrated(path: path, configuration: configuration, durability: durability, readOnly: readOnly,
                                              willMigrate: willMigrate)
        } catch let error as DatabaseError {
            throw SQLiteStoreError.cannotOpen(path: path, detail: error.message ?? "\(error.resultCode)")
        }
        self.readOnly = readOnly
        // Opened and migrated with `synchronous = FULL`; from here each commit is synced after the writer
        // is released (``WALSync``), which makes it as durable.
        if durability == .full && !readOnly {
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
            walSync = WALSync(storePath: path)
        } else {
            walSync = nil
        }
    }

    /// The writer connection's page cache in KiB, as SQLite reports it.
    public func effectiveCacheKiB() throws -> Int {
        try pool.writeWithoutTransaction { db in
            // Negative: KiB; positive: pages.
            let size = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? 0
            return size < 0 ? -size : size * (try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096) / 1024
        }
    }

    /// The durability the writer's commits actually get: SQLite's `synchronous` setting, `FULL`, or
    /// `NORMAL` with the log synced after each commit (``WALSync``).
    public func effectiveDurability() throws -> Durability? {
        let level = try pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        switch level {
        case 2, 3: return .full
        case 1: return walSync == nil ? .normal : .full
        default: return nil
        }
    }

    /// How often the log was synced after commits (``WALSync``); 0 unless `durability` is `full`.
    public var logSyncs: Int { walSync?.completed ?? 0 }

    /// Runs `body` in one write transaction, durable on return.
    public func write<T>(_ body: (any ChatTransaction) throws -> T) throws -> T {
        try writeDurably { db in try body(SQLiteTransaction(db: db, statements: writerStatements)) }
    }

    /// Runs `body` in one write transaction and returns once it is committed: the writer is free for the
    /// next transaction while the returned wait syncs the log (``WALSync``).
    public func writeDeferringDurability<T>(_ body: (any ChatTransaction) throws -> T) throws -> (T, CommitDurability) {
        let result = try pool.writeWithoutTransaction { db in try db.inPreparedTransaction { db in try body(SQLiteTransaction(db: db, statements: writerStatements)) } }
        guard let walSync else { return (result, .durable) }
        return (result, CommitDurability { try walSync.sync() })
    }

    /// Runs `body` in one write transaction on the writer connection, durable on return.
    func writeDurably<T>(_ body: (Database) throws -> T) throws -> T {
        let result = try pool.writeWithoutTransaction { db in try db.inPreparedTransaction(body) }
        try walSync?.sync()
        return result
    }

    /// A user's badge from committed data.
    public func badge(for user: UserID) throws -> BadgeUpdate {
        try pool.read { db in try SQLiteTransaction.badge(for: user, in: db) }
    }

    /// Whether a message is committed: one primary-key lookup, cheap enough to poll.
    public func containsMessage(chat: ChatID, id: MessageID) throws -> Bool {
        try pool.read { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM messages WHERE chat = ? AND id = ?", arguments: [chat.rawValue, id.rawValue]) ?? false
        }
    }

    /// Per stored message, its `sent_at` and `received_at − sent_at` in milliseconds.
    public func messageLatenciesMilliseconds() throws -> [(sentAt: Int64, latency: Int64)] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT sent_at, received_at - sent_at FROM messages").map { (sentAt: $0[0], latency: $0[1]) }
        }
    }

    /// Every (user, chat) unread counter next to a recount from stored messages, for consistency checks:
    /// members that count (declared if the chat was created, else inferred) and every stored counter.
    public func unreadAgainstRecount() throws -> [CounterDrift] {
        try pool.read { db in
            try Row.fetchAll(db, sql: Self.countedUnread + "SELECT user, chat, stored, recounted FROM counted ORDER BY user, chat").map { row in
                CounterDrift(user: UserID(row[0] as String), chat: ChatID(row[1] as String), stored: row[2], recounted: row[3])
            }
        }
    }

    /// Every counter checked against a recount in one pass; only those that differ come back row by row.
    public func unreadDrift() throws -> UnreadDrift {
        try pool.read { db in
            var drift = UnreadDrift(counters: 0, users: 0, differing: [])
            let sql = Self.countedUnread + """
                SELECT user, chat, stored, recounted FROM counted WHERE stored <> recounted
                UNION ALL SELECT NULL, NULL, count(*), count(DISTINCT user) FROM counted
                """
            for row in try Row.fetchAll(db, sql: sql) {
                if let user = row[0] as String?, let chat = row[1] as String? {
                    drift.differing.append(CounterDrift(user: UserID(user), chat: ChatID(chat), stored: row[2], recounted: row[3]))
                } else {
                    (drift.counters, drift.users) = (row[2], row[3])
                }
            }
            drift.differing.sort { ($0.user, $0.chat) < ($1.user, $1.chat) }
            return drift
        }
    }

    /// `counted(user, chat, stored, recounted)`, computed once: the members that count and every stored
    /// counter, each with its stored count and a recount of the chat's messages after the user's read
    /// position that the user did not send.
    static let countedUnread = """
        WITH members AS (
            SELECT m.user, m.chat FROM chat_members m JOIN chats c ON c.chat = m.chat
            WHERE (c.declared = 1 AND m.declared = 1) OR (c.declared = 0 AND m.inferred = 1)),
        pairs AS (SELECT user, chat FROM members UNION SELECT user, chat FROM unread),
        counted AS MATERIALIZED (
            SELECT p.user, p.chat, coalesce((SELECT count FROM unread u WHERE u.user = p.user AND u.chat = p.chat), 0) AS stored,
                CASE WHEN EXISTS (SELECT 1 FROM members x WHERE x.user = p.user AND x.chat = p.chat) THEN
                    (SELECT count(*) FROM messages m LEFT JOIN read_positions r ON r.user = p.user AND r.chat = p.chat
                     WHERE m.chat = p.chat AND m.sender <> p.user
                       AND (r.user IS NULL OR (m.sent_at, m.id) > (r.sent_at, r.message_id)))
                ELSE 0 END AS recounted
            FROM pairs p)

        """

    /// The model tables as sorted lines (see ``ModelSnapshotLine``).
    public func modelSnapshot() throws -> [String] {
        try pool.read { db in
            var lines: [String] = []
            for row in try Row.fetchAll(db, sql: "SELECT chat, id, sender, body, sent_at FROM messages") {
                lines.append(ModelSnapshotLine.message(chat: row[0], id: row[1], sender: row[2], body: row[3], sentAt: row[4]))
            }
            for row in try Row.fetchAll(db, sql: "SELECT chat, declared FROM chats") {
                lines.append(ModelSnapshotLine.chat(row[0], declared: row[1]))
            }
            for row in try Row.fetchAll(db, sql: "SELECT chat, user, declared, inferred FROM chat_members") {
                lines.append(ModelSnapshotLine.member(chat: row[0], user: row[1], declared: row[2], inferred: row[3]))
            }
            for row in try Row.fetchAll(db, sql: "SELECT user, chat, sent_at, message_id FROM read_positions") {
                lines.append(ModelSnapshotLine.readPosition(user: row[0], chat: row[1], sentAt: row[2], messageID: row[3]))
            }
            for row in try Row.fetchAll(db, sql: "SELECT chat, message_id, user FROM pending_reads") {
                lines.append(ModelSnapshotLine.pendingRead(chat: row[0], messageID: row[1], user: row[2]))
            }
            for row in try Row.fetchAll(db, sql: "SELECT user, chat, count FROM unread") {
                lines.append(ModelSnapshotLine.unread(user: row[0], chat: row[1], count: row[2]))
            }
            return lines.sorted()
        }
    }
}
