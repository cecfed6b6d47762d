import HeraldCore
import HeraldPluginAPI
import NIOCore
import PostgresNIO

extension PostgresTransaction {
    /// The server stores a batch's new messages while Herald applies the batch.
    var messagesAhead: MessagesAhead { .sent }

    /// Sends `herald_write_batch` with only the batch's new messages and does not wait for it: the server
    /// inserts them (a third or more of a large batch's writes) while the router applies the batch, the
    /// statement after the counters whose reads must not see them. ``write(_:)`` waits for its answer.
    func storeMessagesAhead(_ messages: [NewMessage]) throws {
        var delta = StoreDelta()
        delta.messages = messages
        ahead.sent = (messages, session.send(statement(writing: delta)))
    }

    /// Writes a batch's changes: `herald_write_batch` (``PostgresWriteFunction``) takes every kind of change
    /// as arrays and applies them on the server, in the order below. When the messages went ahead, it first
    /// checks that every one of them was inserted, then writes the rest (and any message the delta lists
    /// that did not go ahead) in a second call.
    func write(_ delta: StoreDelta) throws {
        var rest = delta
        if let (messages, sent) = ahead.sent {
            ahead.sent = nil
            try StoreConflict.check(inserted: Self.inserted(by: session.answer(to: sent)), of: messages.count)
            rest.messages = NewMessage.remaining(rest.messages, after: messages)
        }
        try StoreConflict.check(inserted: Self.inserted(by: session.query(statement(writing: rest))), of: rest.messages.count)
    }

    /// The messages `herald_write_batch` inserted, from its answer.
    private static func inserted(by rows: PostgresQueryResult) throws -> Int {
        var inserted = 0
        for row in rows { inserted = try row.makeRandomAccess()[0].decode(Int.self) }
        return inserted
    }

    /// The `herald_write_batch` call that writes `delta`.
    private func statement(writing delta: StoreDelta) -> PostgresQuery {
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
        return """
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
            """
    }
}
