import PostgresNIO

/// The PostgreSQL schema, in versioned migrations applied at start under an advisory lock, so several
/// instances may start at once. Tables and columns are named for the people who query them; times
/// are milliseconds since the Unix epoch (`bigint`), ids compare byte-wise (`COLLATE "C"`) as the
/// router orders them.
enum PostgresSchema {
    /// The advisory lock key that serialises migrations ("herald" in ASCII).
    static let migrationLock: Int64 = 0x68_65_72_61_6c_64

    /// Migrations in order; never edit a shipped one, add a new one.
    static let migrations: [(version: Int, name: String, sql: [String])] = [
        (1, "chat model, outbox, dead letters, checkpoints", [
            """
            CREATE TABLE messages (
                seq bigserial PRIMARY KEY,
                chat text NOT NULL, id text COLLATE "C" NOT NULL, sender text NOT NULL, body text NOT NULL,
                sent_at bigint NOT NULL, received_at bigint NOT NULL,
                UNIQUE (chat, id))
            """,
            "CREATE INDEX messages_in_order ON messages (chat, sent_at, id) INCLUDE (sender)",
            "CREATE TABLE chats (chat text PRIMARY KEY, declared boolean NOT NULL DEFAULT false)",
            """
            CREATE TABLE chat_members (
                chat text NOT NULL, user_id text NOT NULL,
                declared boolean NOT NULL DEFAULT false, inferred boolean NOT NULL DEFAULT false,
                PRIMARY KEY (chat, user_id))
            """,
            """
            CREATE TABLE read_positions (
                chat text NOT NULL, user_id text NOT NULL, sent_at bigint NOT NULL, message_id text COLLATE "C" NOT NULL,
                PRIMARY KEY (chat, user_id))
            """,
            """
            CREATE TABLE pending_reads (
                chat text NOT NULL, message_id text COLLATE "C" NOT NULL, user_id text NOT NULL, read_at bigint NOT NULL,
                PRIMARY KEY (chat, message_id, user_id))
            """,
            """
            CREATE TABLE unread_counters (
                user_id text NOT NULL, chat text NOT NULL, unread integer NOT NULL,
                PRIMARY KEY (user_id, chat))
            """,
            """
            CREATE TABLE presence (
                chat text NOT NULL, user_id text NOT NULL, until bigint NOT NULL,
                PRIMARY KEY (chat, user_id))
            """,
            """
            CREATE TABLE outbox (
                seq bigserial PRIMARY KEY, sink text NOT NULL, recipient text NOT NULL, kind text NOT NULL,
                payload bytea NOT NULL, created_at bigint NOT NULL, attempts integer NOT NULL DEFAULT 0)
            """,
            "CREATE INDEX outbox_by_sink ON outbox (sink, seq)",
            """
            CREATE TABLE dead_letters (
                id bigserial PRIMARY KEY, adapter text NOT NULL, origin text NOT NULL, reason text NOT NULL,
                detail text NOT NULL, raw bytea NOT NULL, raw_size integer NOT NULL, received_at bigint NOT NULL,
                replayed_at bigint)
            """,
            """
            CREATE TABLE source_checkpoints (
                source text NOT NULL, key text NOT NULL, value text NOT NULL, updated_at bigint NOT NULL,
                PRIMARY KEY (source, key))
            """,
        ]),
        (2, "herald_write_batch: a batch's writes in one statement", [PostgresWriteFunction.definition(outbox: .rows)]),
        (3, "leases: one instance at a time delivers a sink's outbox or runs a singleton source", [
            """
            CREATE TABLE leases (
                name text PRIMARY KEY, holder text NOT NULL,
                acquired_at timestamptz NOT NULL, expires_at timestamptz NOT NULL)
            """,
        ]),
        // Every outbox statement names its sink. With a key on seq beside an index on (sink, seq), the
        // planner may read a sink's entries through the key and filter on the sink, passing over every
        // entry of a sink that is down; one key on (sink, seq) leaves one way, and one index to write.
        (4, "outbox keyed by sink: one sink's reads never pass over another's undelivered entries", [
            "ALTER TABLE outbox DROP CONSTRAINT outbox_pkey",
            "DROP INDEX outbox_by_sink",
            "ALTER TABLE outbox ADD CONSTRAINT outbox_pkey PRIMARY KEY (sink, seq)",
        ]),
        // Identifiers compare byte-wise. Under the database's collation (en_US.UTF-8 and the like) every
        // comparison in their indexes is a locale-aware one, several times the cost of comparing bytes.
        (5, "identifiers compare byte-wise (COLLATE \"C\"): chats, users, sinks, sources", [
            #"ALTER TABLE messages ALTER COLUMN chat TYPE text COLLATE "C", ALTER COLUMN sender TYPE text COLLATE "C""#,
            #"ALTER TABLE chats ALTER COLUMN chat TYPE text COLLATE "C""#,
            #"ALTER TABLE chat_members ALTER COLUMN chat TYPE text COLLATE "C", ALTER COLUMN user_id TYPE text COLLATE "C""#,
            #"ALTER TABLE read_positions ALTER COLUMN chat TYPE text COLLATE "C", ALTER COLUMN user_id TYPE text COLLATE "C""#,
            #"ALTER TABLE pending_reads ALTER COLUMN chat TYPE text COLLATE "C", ALTER COLUMN user_id TYPE text COLLATE "C""#,
            #"ALTER TABLE unread_counters ALTER COLUMN user_id TYPE text COLLATE "C", ALTER COLUMN chat TYPE text COLLATE "C""#,
            #"ALTER TABLE presence ALTER COLUMN chat TYPE text COLLATE "C", ALTER COLUMN user_id TYPE text COLLATE "C""#,
            #"ALTER TABLE outbox ALTER COLUMN sink TYPE text COLLATE "C", ALTER COLUMN recipient TYPE text COLLATE "C", ALTER COLUMN kind TYPE text COLLATE "C""#,
            #"ALTER TABLE source_checkpoints ALTER COLUMN source TYPE text COLLATE "C", ALTER COLUMN key TYPE text COLLATE "C""#,
            #"ALTER TABLE leases ALTER COLUMN name TYPE text COLLATE "C", ALTER COLUMN holder TYPE text COLLATE "C""#,
        ]),
        (6, "herald_load_slice and herald_load_counters: a batch's reads, planned once per connection",
         [PostgresReadFunctions.slice, PostgresReadFunctions.counters, PostgresReadFunctions.writePageCost]),
        (7, "the outbox in packs: a row per sink and up to 256 outputs of a batch, and a view of it a row per output",
         PostgresOutboxSchema.migration),
        (8, "a commit's functions read by key whatever the tables' statistics: no sequential scans in them",
         PostgresReadFunctions.keyLookups),
        (9, "herald_write_batch inserts the messages the slice found new without a conflict check: the chat locks keep them new",
         [PostgresWriteFunction.definition(outbox: .packs, messages: .checkedBySlice)] + PostgresReadFunctions.writeSettings),
        (10, "a commit's functions plan each statement once per connection, not at every small commit",
         PostgresReadFunctions.genericPlans),
        (11, "a dispatcher's read of the outbox plans once per connection, in a function",
         PostgresReadFunctions.deliveryReads),
        (12, "a counter that reaches 0 leaves unread_counters, as the SQLite store's does",
         [PostgresWriteFunction.definition(outbox: .packs, messages: .checkedBySlice, counters: .removalAfterTheUpsert)]
            + PostgresReadFunctions.writeSettingsSinceGenericPlans + ["DELETE FROM unread_counters WHERE unread <= 0"]),
        (13, "a dispatcher's removal of delivered outputs plans once per connection, in a function",
         PostgresReadFunctions.deliveryRemovals),
    ]

    /// The advisory lock class of per-chat write locks (the second key is the chat's bucket): batches
    /// that touch the same chats take their locks in one order, so they wait for each other instead of
    /// deadlocking, and each loads its slice after the other committed.
    static let chatLockClass: Int32 = 0x6865_7261

    /// Chats map onto this many lock buckets: a batch takes at most this many locks however many chats
    /// it touches (PostgreSQL's shared lock table is small), at the price of two chats in one bucket
    /// waiting for each other.
    static let chatLockBuckets: Int32 = 256

    /// The newest version this binary knows.
    static var knownVersion: Int { migrations.last?.version ?? 0 }
}
