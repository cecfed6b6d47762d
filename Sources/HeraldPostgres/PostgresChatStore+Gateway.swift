public import HeraldCore
public import HeraldPluginAPI
public import Logging
public import CoreMetrics
public import ServiceLifecycle
import PostgresNIO

extension PostgresChatStore: GatewayStore {
    /// The newest `limit` messages of a chat, newest first.
    public func recentMessages(chat: ChatID, limit: Int) throws -> [MessageReceived] {
        try read { session in
            try session.query("""
                SELECT id, sender, body, sent_at FROM messages WHERE chat = \(chat.rawValue) ORDER BY sent_at DESC, id DESC LIMIT \(limit)
                """).map { row in
                let (id, sender, body, sentAt) = try row.decode((String, String, String, Int64).self)
                return MessageReceived(chat: chat, id: MessageID(id), sender: UserID(sender), body: body, sentAt: Timestamp(milliseconds: sentAt))
            }
        }
    }

    /// Milliseconds since the oldest undelivered output was queued, or `nil` when the outbox is empty: the
    /// oldest of each sink's first entry. The sinks are found by stepping through the outbox's key, (sink,
    /// seq), one sink at a time, so a metrics scrape reads a few index entries per sink, not the outbox.
    public func oldestOutputAge(now: Timestamp) throws -> Int64? {
        try read { session in
            try session.query("""
                WITH RECURSIVE sinks(sink) AS (
                    SELECT min(sink) FROM outbox_packs
                    UNION ALL SELECT (SELECT min(sink) FROM outbox_packs WHERE sink > sinks.sink) FROM sinks WHERE sinks.sink IS NOT NULL)
                SELECT min((SELECT created_at FROM outbox_packs p WHERE p.sink = sinks.sink ORDER BY seq LIMIT 1))
                FROM sinks WHERE sink IS NOT NULL
                """).map { try $0.decode(Int64?.self) }.first.flatMap { $0 }
                .map { now.milliseconds - $0 }
        }
    }

    /// Chats with the most messages received since `since`, among the newest 100,000 (by arrival).
    public func busiestChats(since: Timestamp, limit: Int) throws -> [(chat: ChatID, count: Int)] {
        try read { session in
            try session.query("""
                SELECT chat, count(*) AS n FROM (SELECT chat, received_at FROM messages ORDER BY seq DESC LIMIT 100000) recent
                WHERE received_at >= \(since.milliseconds) GROUP BY chat ORDER BY n DESC, chat LIMIT \(limit)
                """).map { row in
                let (chat, count) = try row.decode((String, Int).self)
                return (ChatID(chat), count)
            }
        }
    }

    /// Counted while the server's statistics put the table below `exactBelow` rows; above, the
    /// statistics' live-row figure (kept current as rows are written, without reading the table): a
    /// count reads every row, seconds on a table of a hundred million.
    public func messageCount(exactBelow: Int) throws -> MessageCount {
        try read { session in
            let live = try session.query("SELECT coalesce((SELECT n_live_tup FROM pg_stat_user_tables WHERE relid = 'messages'::regclass), 0)")
                .map { try $0.decode(Int.self) }.first ?? 0
            guard live >= exactBelow else {
                let counted = try session.query("SELECT count(*) FROM messages").map { try $0.decode(Int.self) }.first ?? 0
                return MessageCount(value: counted, estimated: false)
            }
            return MessageCount(value: live, estimated: true)
        }
    }

    /// Counted up to about a million messages, estimated above (see ``messageCount(exactBelow:)``).
    public func messageCount() throws -> MessageCount { try messageCount(exactBelow: 1_000_000) }

    /// Every committed checkpoint of a source.
    public func checkpoints(source: String) throws -> [String: String] {
        try read { session in
            var result: [String: String] = [:]
            for row in try session.query("SELECT key, value FROM source_checkpoints WHERE source = \(source)") {
                let (key, value) = try row.decode((String, String).self)
                result[key] = value
            }
            return result
        }
    }

    /// The URL (without password) and the durability Herald's commits get.
    public func startupMetadata() -> Logger.Metadata {
        let commit = try? synchronousCommit()
        return ["store": "\(settings)", "synchronous_commit": "\(commit ?? "unknown")",
                "durability": "\(commit.map { $0 == "off" ? SQLiteChatStore.Durability.normal : .full }?.rawValue ?? "unknown")"]
    }

    /// The durability Herald's commits actually get: `normal` when its sessions' `synchronous_commit` is `off`
    /// (`store.durability: normal`, or the server's or role's own setting), else `full`.
    public func effectiveDurability() throws -> SQLiteChatStore.Durability {
        try synchronousCommit() == "off" ? .normal : .full
    }

    /// `synchronous_commit` as Herald's sessions have it.
    private func synchronousCommit() throws -> String {
        try read { session in
            try session.query("SELECT current_setting('synchronous_commit')").map { try $0.decode(String.self) }.first ?? "unknown"
        }
    }

    /// The outbox listener, and the outbox's vacuum (the server does the rest of its upkeep).
    public func maintenanceServices(logger: Logger, metrics: any MetricsFactory, outboxSignal: OutboxSignal) -> [any Service] {
        [PostgresOutboxListener(settings: settings, signal: outboxSignal, logger: logger.with("component", "outbox-listener"),
                                ownPayload: notificationPayload, metrics: self.metrics),
         OutboxVacuum(store: self, logger: logger.with("component", "outbox-vacuum"), metrics: metrics)]
    }
}
