/// The server-side function that writes a batch's delta: every kind of change in one statement, so a
/// commit's writes cost the same round trips however many kinds of change it has (statements inside a
/// function run on the server, back to back): a call with the batch's new messages, sent before the batch
/// is applied, and one with the rest (``PostgresTransaction/storeMessagesAhead(_:)``). Each change is the
/// same set-based statement the delta describes: messages inserted once, counters by deltas, read positions
/// only forward. Returns how many messages were inserted, which the caller checks against the slice.
enum PostgresWriteFunction {
    /// How the function inserts a batch's new messages.
    enum MessageInsert {
        /// `ON CONFLICT (chat, id) DO NOTHING`: each row is looked up in the key before it is inserted
        /// (migrations 2 and 7).
        case skippingConflicts
        /// A plain `INSERT` (migration 9). The messages are those the slice, read under the chats' write
        /// locks, does not hold, and every writer inserts a chat's messages only under its lock, so none
        /// of them can be stored meanwhile; the key still refuses a duplicate, and that error
        /// (SQLSTATE 23505) ends the commit as a conflict that the router applies again from a fresh slice.
        /// It saves the key lookup that the conflict check adds to each message.
        case checkedBySlice

        /// What follows the insert's `SELECT` in the function's text. The clause keeps the line break and
        /// indentation it had in migrations 2 and 7, so their statements stay as they shipped.
        var conflictClause: String {
            switch self {
            case .skippingConflicts: "\n        ON CONFLICT (chat, id) DO NOTHING"
            case .checkedBySlice: ""
            }
        }
    }

    /// How the function stores a batch's outputs.
    enum Outbox {
        /// A row of `outbox` per output (migration 2).
        case rows
        /// A row of `outbox_packs` per pack of outputs that Herald packed (migration 7, ``OutboxPack``).
        case packs

        var parameters: String {
            switch self {
            case .rows: "o_sink text[], o_recipient text[], o_kind text[], o_payload bytea[], o_created_at int8[],"
            case .packs: "o_sink text[], o_created_at int8[], o_outputs int4[], o_entries bytea[],"
            }
        }

        var insert: String {
            switch self {
            case .rows: """
                    INSERT INTO outbox (sink, recipient, kind, payload, created_at)
                    SELECT r.sink, r.recipient, r.kind, r.payload, r.created_at
                    FROM unnest(o_sink, o_recipient, o_kind, o_payload, o_created_at) WITH ORDINALITY AS r(sink, recipient, kind, payload, created_at, i)
                    ORDER BY r.i;
                """
            case .packs: """
                    INSERT INTO outbox_packs (sink, created_at, outputs, entries)
                    SELECT r.sink, r.created_at, r.outputs, r.entries
                    FROM unnest(o_sink, o_created_at, o_outputs, o_entries) WITH ORDINALITY AS r(sink, created_at, outputs, entries, i)
                    ORDER BY r.i;
                """
            }
        }
    }

    /// How the function writes unread counters: by deltas in both, so concurrent writers add up.
    enum CounterWrite {
        /// The delta's upsert with a `DELETE` of the counters it brought to 0 in the same statement
        /// (migrations 2, 7 and 9). Every part of a statement sees the table as it was when the statement
        /// began, so that `DELETE` finds no row the upsert changed, and a counter that reaches 0 stays
        /// as a row of 0.
        case removalInTheSameStatement
        /// The delta's upsert, then a statement of its own that removes the falling counters that
        /// reached 0 (migration 12), as the SQLite store does.
        case removalAfterTheUpsert

        /// The statements inside the function's `IF`, indented as in migrations 2, 7 and 9.
        var statements: String {
            switch self {
            case .removalInTheSameStatement: """
                        -- Counters change by deltas, so concurrent writers add up; a counter that reaches 0 goes.
                        WITH changed AS (
                            INSERT INTO unread_counters (user_id, chat, unread) SELECT * FROM unnest(u_user, u_chat, u_delta)
                            ON CONFLICT (user_id, chat) DO UPDATE SET unread = unread_counters.unread + excluded.unread
                            RETURNING user_id, chat, unread)
                        DELETE FROM unread_counters u USING changed c WHERE u.user_id = c.user_id AND u.chat = c.chat AND c.unread <= 0;
                """
            case .removalAfterTheUpsert: """
                        -- Counters change by deltas, so concurrent writers add up.
                        INSERT INTO unread_counters (user_id, chat, unread) SELECT * FROM unnest(u_user, u_chat, u_delta)
                        ON CONFLICT (user_id, chat) DO UPDATE SET unread = unread_counters.unread + excluded.unread;
                        -- A counter that reaches 0 goes; only a falling one can. The row lock the upsert took keeps
                        -- another writer's delta from landing between the two statements.
                        DELETE FROM unread_counters u USING unnest(u_user, u_chat, u_delta) AS k(user_id, chat, delta)
                        WHERE k.delta < 0 AND u.user_id = k.user_id AND u.chat = k.chat AND u.unread <= 0;
                """
            }
        }
    }

    /// Creates (or replaces) `herald_write_batch`, storing outputs as `outbox` says, inserting messages as
    /// `messages` says and writing counters as `counters` says.
    static func definition(outbox: Outbox, messages: MessageInsert = .skippingConflicts,
                           counters: CounterWrite = .removalInTheSameStatement) -> String {
        """
        CREATE OR REPLACE FUNCTION herald_write_batch(
            m_chat text[], m_id text[], m_sender text[], m_body text[], m_sent_at int8[], m_received_at int8[],
            c_chat text[], c_declared bool[],
            cm_chat text[], cm_user text[], cm_declared bool[], cm_inferred bool[],
            rp_chat text[], rp_user text[], rp_sent_at int8[], rp_id text[],
            pa_chat text[], pa_id text[], pa_user text[], pa_read_at int8[],
            pd_chat text[], pd_id text[],
            u_user text[], u_chat text[], u_delta int4[],
            ps_chat text[], ps_user text[], ps_until int8[],
            pc_chat text[], pc_user text[],
            \(outbox.parameters)
            d_adapter text[], d_origin text[], d_reason text[], d_detail text[], d_raw bytea[], d_raw_size int4[], d_received_at int8[],
            k_source text[], k_key text[], k_value text[], k_time int8,
            kd_source text[], kd_key text[]
        ) RETURNS integer LANGUAGE plpgsql AS $$
        DECLARE
            inserted integer := 0;
        BEGIN
            IF cardinality(m_chat) > 0 THEN
                INSERT INTO messages (chat, id, sender, body, sent_at, received_at)
                SELECT * FROM unnest(m_chat, m_id, m_sender, m_body, m_sent_at, m_received_at)\(messages.conflictClause);
                GET DIAGNOSTICS inserted = ROW_COUNT;
            END IF;
            IF cardinality(c_chat) > 0 THEN
                INSERT INTO chats (chat, declared) SELECT * FROM unnest(c_chat, c_declared)
                ON CONFLICT (chat) DO UPDATE SET declared = chats.declared OR excluded.declared;
            END IF;
            IF cardinality(cm_chat) > 0 THEN
                INSERT INTO chat_members (chat, user_id, declared, inferred) SELECT * FROM unnest(cm_chat, cm_user, cm_declared, cm_inferred)
                ON CONFLICT (chat, user_id) DO UPDATE
                SET declared = chat_members.declared OR excluded.declared, inferred = chat_members.inferred OR excluded.inferred;
            END IF;
            IF cardinality(rp_chat) > 0 THEN
                -- Positions only move forward, whoever wrote last.
                INSERT INTO read_positions (chat, user_id, sent_at, message_id) SELECT * FROM unnest(rp_chat, rp_user, rp_sent_at, rp_id)
                ON CONFLICT (chat, user_id) DO UPDATE SET sent_at = excluded.sent_at, message_id = excluded.message_id
                WHERE (excluded.sent_at, excluded.message_id) > (read_positions.sent_at, read_positions.message_id);
            END IF;
            IF cardinality(pa_chat) > 0 THEN
                INSERT INTO pending_reads (chat, message_id, user_id, read_at) SELECT * FROM unnest(pa_chat, pa_id, pa_user, pa_read_at)
                ON CONFLICT (chat, message_id, user_id) DO UPDATE SET read_at = GREATEST(pending_reads.read_at, excluded.read_at);
            END IF;
            IF cardinality(pd_chat) > 0 THEN
                DELETE FROM pending_reads p USING unnest(pd_chat, pd_id) AS k(chat, id) WHERE p.chat = k.chat AND p.message_id = k.id;
            END IF;
            IF cardinality(u_user) > 0 THEN
        \(counters.statements)
            END IF;
            IF cardinality(ps_chat) > 0 THEN
                INSERT INTO presence (chat, user_id, until) SELECT * FROM unnest(ps_chat, ps_user, ps_until)
                ON CONFLICT (chat, user_id) DO UPDATE SET until = excluded.until;
            END IF;
            IF cardinality(pc_chat) > 0 THEN
                DELETE FROM presence p USING unnest(pc_chat, pc_user) AS k(chat, user_id) WHERE p.chat = k.chat AND p.user_id = k.user_id;
            END IF;
            IF cardinality(o_sink) > 0 THEN
            \(outbox.insert)
            END IF;
            IF cardinality(d_adapter) > 0 THEN
                INSERT INTO dead_letters (adapter, origin, reason, detail, raw, raw_size, received_at)
                SELECT * FROM unnest(d_adapter, d_origin, d_reason, d_detail, d_raw, d_raw_size, d_received_at);
            END IF;
            IF cardinality(k_source) > 0 THEN
                INSERT INTO source_checkpoints (source, key, value, updated_at)
                SELECT source, key, value, k_time FROM unnest(k_source, k_key, k_value) AS k(source, key, value)
                ON CONFLICT (source, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at;
            END IF;
            IF cardinality(kd_source) > 0 THEN
                DELETE FROM source_checkpoints c USING unnest(kd_source, kd_key) AS k(source, key) WHERE c.source = k.source AND c.key = k.key;
            END IF;
            RETURN inserted;
        END
        $$
        """
    }
}
