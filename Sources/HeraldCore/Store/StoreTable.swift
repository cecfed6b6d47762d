/// One table as `herald store copy` moves it: its name and columns in each backend, and the kind of value
/// each column holds. The list is the whole store: the chat model, the undelivered outbox, the dead
/// letters and the source checkpoints.
public struct StoreTable: Sendable, Hashable {
    /// What a column holds.
    public enum Kind: Sendable, Hashable {
        /// Text.
        case text
        /// A 64-bit integer.
        case integer
        /// An integer that may be missing.
        case optionalInteger
        /// A flag (0/1 in SQLite, boolean in PostgreSQL).
        case boolean
        /// Bytes.
        case bytes
    }

    /// One column.
    public struct Column: Sendable, Hashable {
        /// The SQLite column.
        public var sqlite: String
        /// The PostgreSQL column.
        public var postgres: String
        /// Its kind.
        public var kind: Kind
    }

    /// The SQLite table. The outbox is `outbox_packs`, whose packs SQLite's side reads an output a row
    /// (``OutboxPack``), with these columns.
    public var sqlite: String
    /// The PostgreSQL table.
    public var postgres: String
    /// The columns copied (generated keys are left out and made anew, in the same order).
    public var columns: [Column]
    /// The SQLite order that keeps arrival and delivery order.
    public var order: String

    /// Whether this is the outbox, whose SQLite rows are packs of outputs and are counted and copied an
    /// output at a time (``OutboxPack``).
    public var holdsOutputs: Bool { sqlite == "outbox_packs" }

    init(_ sqlite: String, _ postgres: String, order: String, _ columns: [(String, String, Kind)]) {
        self.sqlite = sqlite
        self.postgres = postgres
        self.order = order
        self.columns = columns.map { Column(sqlite: $0.0, postgres: $0.1, kind: $0.2) }
    }

    /// Every table of a store.
    public static let all: [StoreTable] = [
        StoreTable("messages", "messages", order: "rowid", [
            ("chat", "chat", .text), ("id", "id", .text), ("sender", "sender", .text), ("body", "body", .text),
            ("sent_at", "sent_at", .integer), ("received_at", "received_at", .integer),
        ]),
        StoreTable("chats", "chats", order: "chat", [("chat", "chat", .text), ("declared", "declared", .boolean)]),
        StoreTable("chat_members", "chat_members", order: "chat, user", [
            ("chat", "chat", .text), ("user", "user_id", .text), ("declared", "declared", .boolean), ("inferred", "inferred", .boolean),
        ]),
        StoreTable("read_positions", "read_positions", order: "chat, user", [
            ("chat", "chat", .text), ("user", "user_id", .text), ("sent_at", "sent_at", .integer), ("message_id", "message_id", .text),
        ]),
        StoreTable("pending_reads", "pending_reads", order: "chat, message_id, user", [
            ("chat", "chat", .text), ("message_id", "message_id", .text), ("user", "user_id", .text), ("read_at", "read_at", .integer),
        ]),
        StoreTable("unread", "unread_counters", order: "user, chat", [
            ("user", "user_id", .text), ("chat", "chat", .text), ("count", "unread", .integer),
        ]),
        StoreTable("presence", "presence", order: "chat, user", [
            ("chat", "chat", .text), ("user", "user_id", .text), ("until", "until", .integer),
        ]),
        StoreTable("outbox_packs", "outbox", order: "seq", [
            ("sink", "sink", .text), ("recipient", "recipient", .text), ("kind", "kind", .text), ("payload", "payload", .bytes),
            ("created_at", "created_at", .integer), ("attempts", "attempts", .integer),
        ]),
        StoreTable("dead_letters", "dead_letters", order: "id", [
            ("adapter", "adapter", .text), ("origin", "origin", .text), ("reason", "reason", .text), ("detail", "detail", .text),
            ("raw", "raw", .bytes), ("raw_size", "raw_size", .integer), ("received_at", "received_at", .integer),
            ("replayed_at", "replayed_at", .optionalInteger),
        ]),
        StoreTable("source_checkpoints", "source_checkpoints", order: "source, key", [
            ("source", "source", .text), ("key", "key", .text), ("value", "value", .text), ("updated_at", "updated_at", .integer),
        ]),
    ]
}

/// One value of a copied row.
public enum StoreValue: Sendable, Hashable {
    /// Text.
    case text(String)
    /// An integer (flags are 0 or 1).
    case integer(Int64)
    /// Bytes.
    case bytes([UInt8])
    /// A missing value.
    case null
}
