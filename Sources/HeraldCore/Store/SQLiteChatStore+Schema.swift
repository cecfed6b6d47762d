import Foundation
import GRDB

extension SQLiteChatStore {
    /// Schema migrations, applied in order on open. Never edit a shipped migration; add a new one.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-chat-model") { db in
            try db.execute(sql: """
                CREATE TABLE messages(
                    chat TEXT NOT NULL, id TEXT NOT NULL, sender TEXT NOT NULL, body TEXT NOT NULL,
                    sent_at INTEGER NOT NULL, received_at INTEGER NOT NULL,
                    PRIMARY KEY (chat, id)) WITHOUT ROWID;
                CREATE INDEX messages_in_order ON messages(chat, sent_at, id);
                CREATE TABLE chats(chat TEXT PRIMARY KEY NOT NULL, declared INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
                CREATE TABLE chat_members(
                    chat TEXT NOT NULL, user TEXT NOT NULL,
                    declared INTEGER NOT NULL DEFAULT 0, inferred INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (chat, user)) WITHOUT ROWID;
                CREATE TABLE read_positions(
                    user TEXT NOT NULL, chat TEXT NOT NULL, sent_at INTEGER NOT NULL, message_id TEXT NOT NULL,
                    PRIMARY KEY (chat, user)) WITHOUT ROWID;
                CREATE TABLE pending_reads(
                    chat TEXT NOT NULL, message_id TEXT NOT NULL, user TEXT NOT NULL, read_at INTEGER NOT NULL,
                    PRIMARY KEY (chat, message_id, user)) WITHOUT ROWID;
                CREATE TABLE unread(
                    user TEXT NOT NULL, chat TEXT NOT NULL, count INTEGER NOT NULL,
                    PRIMARY KEY (user, chat)) WITHOUT ROWID;
                CREATE TABLE presence(
                    user TEXT NOT NULL, chat TEXT NOT NULL, until INTEGER NOT NULL,
                    PRIMARY KEY (chat, user)) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v1-outbox-and-dlq") { db in
            try db.execute(sql: """
                -- seq grows with commit order and is never reused (AUTOINCREMENT), so a dispatcher can read
                -- "after the last delivered" and sinks can use it as a delivery id. No secondary index: a
                -- dispatcher reads the rowid range after its position, which only moves forward (see
                -- ChatStore.outboxFollowsCommitOrder), so it passes over other sinks' entries only once.
                CREATE TABLE outbox(
                    seq INTEGER PRIMARY KEY AUTOINCREMENT, sink TEXT NOT NULL, recipient TEXT NOT NULL,
                    kind TEXT NOT NULL, payload BLOB NOT NULL, created_at INTEGER NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0);
                CREATE TABLE dead_letters(
                    id INTEGER PRIMARY KEY AUTOINCREMENT, adapter TEXT NOT NULL, origin TEXT NOT NULL,
                    reason TEXT NOT NULL, detail TEXT NOT NULL, raw BLOB NOT NULL, raw_size INTEGER NOT NULL,
                    received_at INTEGER NOT NULL, replayed_at INTEGER);
                """)
        }
        migrator.registerMigration("v2-source-checkpoints") { db in
            try db.execute(sql: """
                -- Positions of sources that resume (stream event ids, page cursors, ETags), written in the
                -- same transaction as the events they cover.
                CREATE TABLE source_checkpoints(
                    source TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, updated_at INTEGER NOT NULL,
                    PRIMARY KEY (source, key)) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v3-store-counters") { db in
            try db.execute(sql: """
                -- Row counts kept in the transactions that change them (see StoreCounter), so status pages and
                -- metrics do not read whole tables. Names: messages, open_dead_letters, outbox:<sink>.
                CREATE TABLE store_counters(name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID;
                INSERT INTO store_counters(name, value) SELECT 'messages', count(*) FROM messages;
                INSERT INTO store_counters(name, value) SELECT 'open_dead_letters', count(*) FROM dead_letters WHERE replayed_at IS NULL;
                INSERT INTO store_counters(name, value) SELECT 'outbox:' || sink, count(*) FROM outbox GROUP BY sink;
                """)
        }
        migrator.registerMigration("v4-messages-in-arrival-order") { db in
            try db.execute(sql: """
                -- Messages move from a WITHOUT ROWID table clustered by (chat, id) to a rowid table in arrival
                -- order. Clustered by chat, a commit spanning N chats dirtied N pages of the table itself, each
                -- written whole to the WAL; appended rows share pages. Two narrow indexes keep the lookups:
                -- by id (idempotency, read positions) and in order with the sender (unread recounts, receipt
                -- senders, history), so neither needs the table row.
                CREATE TABLE messages_in_arrival_order(
                    chat TEXT NOT NULL, id TEXT NOT NULL, sender TEXT NOT NULL, body TEXT NOT NULL,
                    sent_at INTEGER NOT NULL, received_at INTEGER NOT NULL);
                INSERT INTO messages_in_arrival_order(chat, id, sender, body, sent_at, received_at)
                    SELECT chat, id, sender, body, sent_at, received_at FROM messages ORDER BY received_at, chat, sent_at, id;
                DROP TABLE messages;
                ALTER TABLE messages_in_arrival_order RENAME TO messages;
                CREATE UNIQUE INDEX messages_by_id ON messages(chat, id);
                CREATE INDEX messages_in_order ON messages(chat, sent_at, id, sender);
                """)
        }
        migrator.registerMigration("v5-outbox-packs", migrate: moveOutboxToPacks)
        return migrator
    }

    /// The outbox moves to packs (``OutboxPack``): a commit's outputs for one sink, up to 256 of them, are one
    /// row, written, read and removed as one. Each undelivered output of the row-per-output table becomes a
    /// pack of one, in the same order (and gets a new sequence: a dispatcher reads from the start after a
    /// restart). The counts of outputs per sink (`store_counters`) stay as they are.
    private static func moveOutboxToPacks(_ db: Database) throws {
        try db.execute(sql: """
            -- seq grows with commit order and is never reused; an output's sequence is seq * 65536 plus its
            -- place in the pack. `delivered` counts the outputs at the pack's front that are delivered,
            -- `attempts` the failed deliveries of the first one that is not.
            CREATE TABLE outbox_packs(
                seq INTEGER PRIMARY KEY AUTOINCREMENT, sink TEXT NOT NULL, created_at INTEGER NOT NULL,
                outputs INTEGER NOT NULL, delivered INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 0,
                entries BLOB NOT NULL);
            """)
        let insert = try db.makeStatement(sql: "INSERT INTO outbox_packs(sink, created_at, outputs, attempts, entries) VALUES (?, ?, 1, ?, ?)")
        let rows = try Row.fetchCursor(db, sql: "SELECT sink, recipient, kind, payload, created_at, attempts FROM outbox ORDER BY seq")
        while let row = try rows.next() {
            let payload: Data = row[3]
            let entry = OutboxPack.entry(recipient: row[1], kind: row[2], payload: [UInt8](payload))
            try insert.execute(arguments: [row[0] as String, row[4] as Int64, row[5] as Int64, Data(entry)])
        }
        try db.execute(sql: "DROP TABLE outbox")
    }
}
