import Foundation
import GRDB
public import HeraldPluginAPI

/// The SQLite chat store: one file in WAL mode, one writer, readers that never block it.
public final class SQLiteChatStore: ChatStore {
    /// How hard SQLite syncs each commit.
    public enum Durability: String, Sendable, Codable, CaseIterable {
        /// fsync on every commit: survives power loss.
        case full
        /// fsync at checkpoints: survives process crashes (`kill -9`), may lose the last commits on power loss.
        case normal
    }

    let pool: DatabasePool
    let readOnly: Bool
    let memory = StoreMemory()
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
        if !readOnly { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        self.path = path
        self.pool = try Self.openMigrated(path: path, configuration: configuration, durability: durability, readOnly: readOnly,
                                          willMigrate: willMigrate)
        self.readOnly = readOnly
    }

    /// The writer connection's page cache in KiB, as SQLite reports it.
    public func effectiveCacheKiB() throws -> Int {
        try pool.writeWithoutTransaction { db in
            // Negative: KiB; positive: pages.
            let size = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? 0
            return size < 0 ? -size : size * (try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096) / 1024
        }
    }

    /// The durability the writer connection actually runs with (SQLite's `synchronous` setting).
    public func effectiveDurability() throws -> Durability? {
        let level = try pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        switch level {
        case 2, 3: return .full
        case 1: return .normal
        default: return nil
        }
    }

    /// Runs `body` in one write transaction.
    public func write<T>(_ body: (any ChatTransaction) throws -> T) throws -> T {
        // Our own commits do not change the writer connection's data_version; another process's do.
        let (result, cache, version) = try pool.write { db in
            let version = try Int.fetchOne(db.cachedStatement(sql: "PRAGMA data_version")) ?? 0
            let transaction = SQLiteTransaction(db: db, cache: memory.begin(dataVersion: version))
            let result = try body(transaction)
            try transaction.flush()
            return (result, transaction.cache, version)
        }
        memory.commit(cache, dataVersion: version)
        return result
    }

    /// A user's badge from committed data.
    public func badge(for user: UserID) throws -> BadgeUpdate {
        try pool.read { db in try SQLiteTransaction(db: db).badge(for: user) }
    }

    /// Whether a message is committed: one primary-key lookup, cheap enough to poll.
    public func containsMessage(chat: ChatID, id: MessageID) throws -> Bool {
        try pool.read { db in
            try SQLiteTransaction(db: db).messageKey(chat: chat, id: id) != nil
        }
    }

    /// Every (user, chat) unread counter next to a recount from stored messages, for consistency checks.
    public func unreadAgainstRecount() throws -> [(user: UserID, chat: ChatID, stored: Int, recounted: Int)] {
        try pool.read { db in
            let tx = SQLiteTransaction(db: db)
            let pairs = try Row.fetchAll(db, sql: """
                SELECT user, chat FROM chat_members m
                WHERE (SELECT declared FROM chats c WHERE c.chat = m.chat) = 1 AND declared = 1
                   OR (SELECT declared FROM chats c WHERE c.chat = m.chat) = 0 AND inferred = 1
                UNION SELECT user, chat FROM unread
                """)
            return try pairs.map { row in
                let user = UserID(row["user"] as String)
                let chat = ChatID(row["chat"] as String)
                let members = try tx.members(of: chat)
                let recount = members.contains(user)
                    ? try tx.countUnread(user: user, chat: chat, after: try tx.readPosition(user: user, chat: chat)) : 0
                return (user, chat, try tx.unread(user: user, chat: chat), recount)
            }
        }
    }

    /// A canonical dump of the model tables (not the outbox or presence), for comparing stores.
    public func modelSnapshot() throws -> [String] {
        try pool.read { db in
            var lines: [String] = []
            let queries = [
                "SELECT 'm', chat, id, sender, body, sent_at FROM messages ORDER BY chat, id",
                "SELECT 'c', chat, declared FROM chats ORDER BY chat",
                "SELECT 'cm', chat, user, declared, inferred FROM chat_members ORDER BY chat, user",
                "SELECT 'r', user, chat, sent_at, message_id FROM read_positions ORDER BY user, chat",
                "SELECT 'p', chat, message_id, user FROM pending_reads ORDER BY chat, message_id, user",
                "SELECT 'u', user, chat, count FROM unread ORDER BY user, chat",
            ]
            for sql in queries {
                for row in try Row.fetchAll(db, sql: sql) { lines.append(row.description) }
            }
            return lines
        }
    }
}

extension SQLiteChatStore {
    /// Per stored message, its `sent_at` and `received_at − sent_at` (apply time minus send time),
    /// both in milliseconds, for the benchmark's publish→commit latency.
    public func messageLatenciesMilliseconds() throws -> [(sentAt: Int64, latency: Int64)] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT sent_at, received_at - sent_at FROM messages").map { (sentAt: $0[0], latency: $0[1]) }
        }
    }
}
