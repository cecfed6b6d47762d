public import HeraldPluginAPI
public import Logging
public import CoreMetrics
public import ServiceLifecycle

/// A store the gateway runs on: the chat store, plus what the admin API, the start-up log and the
/// service group need of it. SQLite and PostgreSQL both provide it.
public protocol GatewayStore: ChatStoreInspection {
    /// The newest `limit` messages of a chat, newest first.
    func recentMessages(chat: ChatID, limit: Int) throws -> [MessageReceived]
    /// Milliseconds since the oldest undelivered output was queued, or `nil` when the outbox is empty.
    func oldestOutputAge(now: Timestamp) throws -> Int64?
    /// Chats with the most messages received since `since`, busiest first (answers quickly on any store).
    func busiestChats(since: Timestamp, limit: Int) throws -> [(chat: ChatID, count: Int)]
    /// Every committed checkpoint of a source (`key: value`).
    func checkpoints(source: String) throws -> [String: String]
    /// How many messages the store holds, for status pages: exact where that is cheap, else the
    /// database's own estimate (``MessageCount/estimated``), so a status call costs the same on a store
    /// of any size.
    func messageCount() throws -> MessageCount
    /// Where the store is and how it runs, for the start-up log (no secrets).
    func startupMetadata() -> Logger.Metadata
    /// Long-running upkeep the store needs beside the gateway (SQLite's log checkpoints; PostgreSQL's
    /// listener that wakes `outboxSignal` when another instance queues outputs), if any.
    func maintenanceServices(logger: Logger, metrics: any MetricsFactory, outboxSignal: OutboxSignal) -> [any Service]
}

/// The number of stored messages a status page shows.
public struct MessageCount: Sendable, Hashable {
    /// Messages stored.
    public var value: Int
    /// Whether `value` is the database's estimate rather than a count.
    public var estimated: Bool

    /// Creates a value.
    public init(value: Int, estimated: Bool) {
        self.value = value
        self.estimated = estimated
    }
}

extension SQLiteChatStore: GatewayStore {
    /// Exact: a counter kept in the same transactions as the rows.
    public func messageCount() throws -> MessageCount { MessageCount(value: try statistics().messages, estimated: false) }

    /// The chats with the most messages since `since`, among the newest 100,000.
    public func busiestChats(since: Timestamp, limit: Int) throws -> [(chat: ChatID, count: Int)] {
        try busiestChats(since: since, limit: limit, scanLimit: 100_000)
    }

    /// File, durability and cache.
    public func startupMetadata() -> Logger.Metadata {
        let durability = (try? effectiveDurability()) ?? nil
        return ["store": "\(path)", "durability": "\(durability?.rawValue ?? "unknown")",
                "cache_kib": "\((try? effectiveCacheKiB()) ?? 0)"]
    }

    /// The WAL checkpointer.
    public func maintenanceServices(logger: Logger, metrics: any MetricsFactory, outboxSignal: OutboxSignal) -> [any Service] {
        [WALCheckpointer(store: self, logger: logger.with("component", "checkpointer"), metrics: metrics)]
    }
}
