import HeraldCore
import HeraldPluginAPI
import NIOCore
import PostgresNIO

extension PostgresTransaction {
    /// Writes a batch's changes in one statement: `herald_write_batch` (``PostgresWriteFunction``) takes
    /// every kind of change as arrays and applies them on the server, in the order below.
    func write(_ delta: StoreDelta) throws {
        let messages = delta.messages
        let chats = delta.chats.sorted { $0.key < $1.key }
        let members = delta.members
        let positions = delta.readPositions
        let added = delta.pendingReadsAdded
        let resolved = delta.pendingReadsResolved
        let counters = delta.unreadDeltas
        let focused = delta.presence.filter { $0.until != nil }
        let unfocused = delta.presence.filter { $0.until == nil }
        let outbox = delta.outbox
        let packs = OutboxPack.packing(outbox)
        let letters = delta.deadLetters
        let saved = delta.checkpoints.compactMap { checkpoint in checkpoint.value.map { (checkpoint, $0) } }
        let removed = delta.checkpoints.filter { $0.value == nil }
        // Outputs queued: wake the other instances' dispatchers when this commits (NOTIFY is transactional).
        // The payload is a UUID (hex digits and dashes), safe to write as a literal.
        let notify = outbox.isEmpty ? "" : ", pg_notify('\(outboxChannel)', '\(notificationPayload)')"
        let rows = try session.query("""
            SELECT herald_write_batch(
                \(messages.map(\.message.chat.rawValue))::text[], \(messages.map(\.message.id.rawValue))::text[],
                \(messages.map(\.message.sender.rawValue))::text[], \(messages.map(\.message.body))::text[],
                \(messages.map(\.message.sentAt.milliseconds))::int8[], \(messages.map(\.receivedAt.milliseconds))::int8[],
                \(chats.map(\.key.rawValue))::text[], \(chats.map(\.value))::bool[],
                \(members.map(\.chat.rawValue))::text[], \(members.map(\.user.rawValue))::text[],
                \(members.map(\.declared))::bool[], \(members.map(\.inferred))::bool[],
                \(positions.map(\.chat.rawValue))::text[], \(positions.map(\.user.rawValue))::text[],
                \(positions.map(\.key.sentAt.milliseconds))::int8[], \(positions.map(\.key.id.rawValue))::text[],
                \(added.map(\.message.chat.rawValue))::text[], \(added.map(\.message.id.rawValue))::text[],
                \(added.map(\.user.rawValue))::text[], \(added.map(\.readAt.milliseconds))::int8[],
                \(resolved.map(\.chat.rawValue))::text[], \(resolved.map(\.id.rawValue))::text[],
                \(counters.map(\.user.rawValue))::text[], \(counters.map(\.chat.rawValue))::text[], \(counters.map(\.delta))::int4[],
                \(focused.map(\.chat.rawValue))::text[], \(focused.map(\.user.rawValue))::text[],
                \(focused.map { $0.until?.milliseconds ?? 0 })::int8[],
                \(unfocused.map(\.chat.rawValue))::text[], \(unfocused.map(\.user.rawValue))::text[],
                \(packs.map(\.sink))::text[], \(packs.map(\.createdAt))::int8[], \(packs.map { $0.rows.count })::int4[],
                \(ByteaArray(packs, writing: { pack, buffer in pack.writeEntries(of: outbox, into: &buffer) }))::bytea[],
                \(letters.map(\.provenance.adapter))::text[], \(letters.map(\.provenance.origin))::text[],
                \(letters.map(\.rejection.reason.rawValue))::text[], \(letters.map(\.rejection.detail))::text[],
                \(ByteaArray(letters) { $0.raw })::bytea[], \(letters.map(\.provenance.rawSize))::int4[],
                \(letters.map(\.provenance.receivedAt.milliseconds))::int8[],
                \(saved.map(\.0.source))::text[], \(saved.map(\.0.key))::text[], \(saved.map(\.1))::text[],
                \(delta.checkpointTime.milliseconds)::int8,
                \(removed.map(\.source))::text[], \(removed.map(\.key))::text[])\(unescaped: notify)
            """)
        var inserted = 0
        for row in rows { inserted = try row.makeRandomAccess()[0].decode(Int.self) }
        guard inserted == messages.count else {
            throw StoreConflict("\(messages.count - inserted) of \(messages.count) messages were stored meanwhile")
        }
    }
}
