import HeraldCore
import HeraldPluginAPI
import NIOCore
import PostgresNIO

extension PostgresTransaction {
    /// Writes a batch's changes: one statement per kind of change, each skipped when it has no rows.
    func write(_ delta: StoreDelta) throws {
        if !delta.messages.isEmpty {
            let messages = delta.messages
            let inserted = try session.execute("""
                INSERT INTO messages (chat, id, sender, body, sent_at, received_at)
                SELECT * FROM unnest(\(messages.map(\.message.chat.rawValue))::text[], \(messages.map(\.message.id.rawValue))::text[],
                    \(messages.map(\.message.sender.rawValue))::text[], \(messages.map(\.message.body))::text[],
                    \(messages.map(\.message.sentAt.milliseconds))::int8[], \(messages.map(\.receivedAt.milliseconds))::int8[])
                ON CONFLICT (chat, id) DO NOTHING
                """)
            guard inserted == messages.count else {
                throw StoreConflict("\(messages.count - inserted) of \(messages.count) messages were stored meanwhile")
            }
        }
        try writeMembership(delta)
        try writeReads(delta)
        try writeCounters(delta.unreadDeltas)
        try writePresence(delta.presence)
        try writeQueues(delta)
    }

    private func writeMembership(_ delta: StoreDelta) throws {
        if !delta.chats.isEmpty {
            let chats = delta.chats.sorted { $0.key < $1.key }
            try session.execute("""
                INSERT INTO chats (chat, declared) SELECT * FROM unnest(\(chats.map(\.key.rawValue))::text[], \(chats.map(\.value))::bool[])
                ON CONFLICT (chat) DO UPDATE SET declared = chats.declared OR excluded.declared
                """)
        }
        if !delta.members.isEmpty {
            let members = delta.members
            try session.execute("""
                INSERT INTO chat_members (chat, user_id, declared, inferred)
                SELECT * FROM unnest(\(members.map(\.chat.rawValue))::text[], \(members.map(\.user.rawValue))::text[],
                    \(members.map(\.declared))::bool[], \(members.map(\.inferred))::bool[])
                ON CONFLICT (chat, user_id) DO UPDATE
                SET declared = chat_members.declared OR excluded.declared, inferred = chat_members.inferred OR excluded.inferred
                """)
        }
    }

    private func writeReads(_ delta: StoreDelta) throws {
        if !delta.readPositions.isEmpty {
            let positions = delta.readPositions
            // Positions only move forward, whoever wrote last.
            try session.execute("""
                INSERT INTO read_positions (chat, user_id, sent_at, message_id)
                SELECT * FROM unnest(\(positions.map(\.chat.rawValue))::text[], \(positions.map(\.user.rawValue))::text[],
                    \(positions.map(\.key.sentAt.milliseconds))::int8[], \(positions.map(\.key.id.rawValue))::text[])
                ON CONFLICT (chat, user_id) DO UPDATE SET sent_at = excluded.sent_at, message_id = excluded.message_id
                WHERE (excluded.sent_at, excluded.message_id) > (read_positions.sent_at, read_positions.message_id)
                """)
        }
        if !delta.pendingReadsAdded.isEmpty {
            let added = delta.pendingReadsAdded
            try session.execute("""
                INSERT INTO pending_reads (chat, message_id, user_id, read_at)
                SELECT * FROM unnest(\(added.map(\.message.chat.rawValue))::text[], \(added.map(\.message.id.rawValue))::text[],
                    \(added.map(\.user.rawValue))::text[], \(added.map(\.readAt.milliseconds))::int8[])
                ON CONFLICT (chat, message_id, user_id) DO UPDATE SET read_at = GREATEST(pending_reads.read_at, excluded.read_at)
                """)
        }
        if !delta.pendingReadsResolved.isEmpty {
            let resolved = delta.pendingReadsResolved
            try session.execute("""
                DELETE FROM pending_reads p USING unnest(\(resolved.map(\.chat.rawValue))::text[], \(resolved.map(\.id.rawValue))::text[]) AS k(chat, id)
                WHERE p.chat = k.chat AND p.message_id = k.id
                """)
        }
    }

    private func writeCounters(_ deltas: [UnreadDelta]) throws {
        guard !deltas.isEmpty else { return }
        // Counters change by deltas, so concurrent writers add up; a counter that reaches 0 goes.
        try session.execute("""
            WITH changed AS (
                INSERT INTO unread_counters (user_id, chat, unread)
                SELECT * FROM unnest(\(deltas.map(\.user.rawValue))::text[], \(deltas.map(\.chat.rawValue))::text[], \(deltas.map(\.delta))::int4[])
                ON CONFLICT (user_id, chat) DO UPDATE SET unread = unread_counters.unread + excluded.unread
                RETURNING user_id, chat, unread)
            DELETE FROM unread_counters u USING changed c WHERE u.user_id = c.user_id AND u.chat = c.chat AND c.unread <= 0
            """)
    }

    private func writePresence(_ changes: [PresenceChange]) throws {
        let set = changes.filter { $0.until != nil }
        if !set.isEmpty {
            try session.execute("""
                INSERT INTO presence (chat, user_id, until)
                SELECT * FROM unnest(\(set.map(\.chat.rawValue))::text[], \(set.map(\.user.rawValue))::text[],
                    \(set.map { $0.until?.milliseconds ?? 0 })::int8[])
                ON CONFLICT (chat, user_id) DO UPDATE SET until = excluded.until
                """)
        }
        let cleared = changes.filter { $0.until == nil }
        if !cleared.isEmpty {
            try session.execute("""
                DELETE FROM presence p USING unnest(\(cleared.map(\.chat.rawValue))::text[], \(cleared.map(\.user.rawValue))::text[]) AS k(chat, user_id)
                WHERE p.chat = k.chat AND p.user_id = k.user_id
                """)
        }
    }

    private func writeQueues(_ delta: StoreDelta) throws {
        if !delta.outbox.isEmpty {
            let rows = delta.outbox
            try session.execute("""
                INSERT INTO outbox (sink, recipient, kind, payload, created_at)
                SELECT * FROM unnest(\(rows.map(\.sink))::text[], \(rows.map(\.recipient.rawValue))::text[], \(rows.map(\.kind.rawValue))::text[],
                    \(rows.map { ByteBuffer(bytes: $0.payload) })::bytea[], \(rows.map(\.createdAt.milliseconds))::int8[])
                """)
        }
        if !delta.deadLetters.isEmpty {
            let letters = delta.deadLetters
            try session.execute("""
                INSERT INTO dead_letters (adapter, origin, reason, detail, raw, raw_size, received_at)
                SELECT * FROM unnest(\(letters.map(\.provenance.adapter))::text[], \(letters.map(\.provenance.origin))::text[],
                    \(letters.map(\.rejection.reason.rawValue))::text[], \(letters.map(\.rejection.detail))::text[],
                    \(letters.map { ByteBuffer(bytes: $0.raw) })::bytea[], \(letters.map(\.provenance.rawSize))::int4[],
                    \(letters.map(\.provenance.receivedAt.milliseconds))::int8[])
                """)
        }
        let saved = delta.checkpoints.compactMap { checkpoint in checkpoint.value.map { (checkpoint, $0) } }
        if !saved.isEmpty {
            try session.execute("""
                INSERT INTO source_checkpoints (source, key, value, updated_at)
                SELECT source, key, value, \(delta.checkpointTime.milliseconds) FROM unnest(\(saved.map(\.0.source))::text[],
                    \(saved.map(\.0.key))::text[], \(saved.map(\.1))::text[]) AS k(source, key, value)
                ON CONFLICT (source, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
                """)
        }
        let removed = delta.checkpoints.filter { $0.value == nil }
        if !removed.isEmpty {
            try session.execute("""
                DELETE FROM source_checkpoints c USING unnest(\(removed.map(\.source))::text[], \(removed.map(\.key))::text[]) AS k(source, key)
                WHERE c.source = k.source AND c.key = k.key
                """)
        }
    }
}
