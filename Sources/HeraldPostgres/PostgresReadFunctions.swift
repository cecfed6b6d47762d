/// The server-side functions that load a batch's state slice. A statement sent as text is parsed and
/// planned at every call, and for the slice's six-way `UNION ALL` planning cost more than running it
/// (about 1 ms against 0.6 ms for 27 chats); PL/pgSQL keeps a function's plans for the connection's
/// life, so a commit pays only for running its reads. Both functions are `VOLATILE`: each statement in
/// them takes a fresh snapshot, so the slice is read after the chat locks are taken.
///
/// A kept plan is made without the batch's keys, and every read here looks up a few rows per key. With
/// the server's default `random_page_cost` (4, priced for spinning disks) the planner scans whole tables
/// of a few thousand rows instead of their keys, about four times the work; ``pageCost`` prices a page
/// read as on an SSD or from the cache, for these functions and `herald_write_batch` only.
///
/// A kept plan also outlives the statistics it was made from. A new store's first commits plan against
/// empty tables that no `ANALYZE` has seen, where a scan of the whole table looks as cheap as a lookup,
/// and the connection keeps those plans while the tables grow, until autovacuum first analyzes them (up to
/// a minute later, and only after enough rows changed). Commits of 100 messages then scanned every stored
/// message to count a few ranges. ``keyLookups`` turns sequential scans off inside the three functions,
/// so every plan they make reads by key, whatever the statistics say.
///
/// PL/pgSQL keeps a statement's plan only once the server chooses its generic plan. For a statement with
/// parameters the server makes a custom plan from each call's values for the first five calls, and then
/// another at every call for as long as the generic plan, priced without the values, looks dearer than the
/// custom ones: it prices an array parameter at ten elements, so a commit of a message or two planned the
/// slice's six-way `UNION ALL` anew every time (0.19 ms of the server's CPU a commit at 200 msg/s, twice
/// what running it took), and which of the functions' statements did so changed with the data.
/// ``genericPlans`` makes the three functions always use, and keep, the generic plan.
enum PostgresReadFunctions {
    /// The `random_page_cost` Herald's functions plan with.
    static let pageCost = "1.1"

    /// Gives `herald_write_batch` the same page cost.
    static let writePageCost = "ALTER FUNCTION herald_write_batch SET random_page_cost = \(pageCost)"

    /// Plans in the three functions never scan whole tables (migration 8); `herald_write_batch`, which
    /// migration 7 defines anew, plans with ``pageCost`` as the other two do.
    static let keyLookups = [
        "ALTER FUNCTION herald_load_slice SET enable_seqscan = off",
        "ALTER FUNCTION herald_load_counters SET enable_seqscan = off",
    ] + writeSettings

    /// The three functions plan each statement once per connection, whatever a commit's size (migration
    /// 10). A later migration that defines one of them anew applies its entry again.
    static let genericPlans = ["herald_load_slice", "herald_load_counters", "herald_write_batch"].map(genericPlan)

    /// Makes the function `name` always use, and keep, the generic plan of each of its statements.
    static func genericPlan(_ name: String) -> String { "ALTER FUNCTION \(name) SET plan_cache_mode = force_generic_plan" }

    /// A dispatcher's read of its sink's packs (``PostgresChatStore/pendingOutputsSQL``, its parameters the
    /// function's), in a function that keeps its plan as the commit's do (migration 11). Sent as text, the
    /// read was planned at every delivery: 0.16 ms a read on loopback against 0.10 ms through the function.
    static let deliveryReads = [
        """
        CREATE OR REPLACE FUNCTION herald_pending_outputs(text, int8, int8, int8)
        RETURNS TABLE (seq int8, created_at int8, delivered integer, attempts integer, first int8, entries bytea)
        LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
        #variable_conflict use_column
        BEGIN
            RETURN QUERY \(PostgresChatStore.pendingOutputsSQL);
        END $$
        """,
    ]

    /// A dispatcher's removal of what its sink delivered (``PostgresChatStore/removeOutputsSQL``, its
    /// parameters the function's), in a function that keeps its plan (migration 13): sent as text, the
    /// statement is planned at every delivery, which costs the server 0.19 ms against 0.11 ms to run it.
    /// The statement names the delivered packs' keys itself, so the plan it keeps looks them up by key
    /// even when it was made while the outbox was empty and unanalysed.
    static let deliveryRemovals = [
        """
        CREATE OR REPLACE FUNCTION herald_remove_outputs(text, int8[], int4[], int4[])
        RETURNS void LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
        BEGIN
            \(PostgresChatStore.removeOutputsSQL);
        END $$
        """,
    ]

    /// Herald's functions that the gateway's role calls.
    static let gatewayFunctions = ["herald_load_slice", "herald_load_counters", "herald_write_batch", "herald_pending_outputs",
                                   "herald_remove_outputs"]

    /// `herald_write_batch`'s own settings: what migration 8 gives it, and what a migration that defines
    /// the function anew gives it again (`CREATE OR REPLACE FUNCTION` drops a function's settings).
    static let writeSettings = ["ALTER FUNCTION herald_write_batch SET enable_seqscan = off", writePageCost]

    /// Everything a migration after 10 that defines `herald_write_batch` anew gives it again: the settings
    /// of migrations 8 and 10.
    static let writeSettingsSinceGenericPlans = writeSettings + [genericPlan("herald_write_batch")]

    /// Creates (or replaces) `herald_load_slice`: takes the chats' write locks (see
    /// ``PostgresSchema/chatLockClass``), then returns the slice, each part a branch of a `UNION ALL`
    /// told apart by `kind`: 0 named messages that are stored, 1 each chat's newest message, 2 chats
    /// and their members, 3 read positions, 4 presence, 5 reads waiting for a named message.
    static let slice = """
        CREATE OR REPLACE FUNCTION herald_load_slice(p_chats text[], p_message_chats text[], p_message_ids text[])
        RETURNS TABLE (kind integer, chat text, id text, user_id text, at int8,
                       chat_declared boolean, member_declared boolean, member_inferred boolean)
        LANGUAGE plpgsql SET random_page_cost = \(pageCost) AS $$
        #variable_conflict use_column
        BEGIN
            -- Ascending order, so two batches never wait for each other in a cycle.
            PERFORM pg_advisory_xact_lock(\(PostgresSchema.chatLockClass), bucket) FROM (
                SELECT DISTINCT abs(hashtext(c) % \(PostgresSchema.chatLockBuckets)) AS bucket
                FROM unnest(p_chats) AS c ORDER BY 1) AS buckets;
            RETURN QUERY
            WITH named AS (SELECT * FROM unnest(p_message_chats, p_message_ids) AS k(chat, id)),
                 touched AS (SELECT * FROM unnest(p_chats) AS k(chat))
            SELECT 0, m.chat::text, m.id::text, m.sender::text, m.sent_at, NULL::bool, NULL::bool, NULL::bool
                FROM named k JOIN messages m ON m.chat = k.chat AND m.id = k.id
            UNION ALL SELECT 1, k.chat, n.id::text, NULL, n.sent_at, NULL, NULL, NULL
                FROM touched k CROSS JOIN LATERAL (
                    SELECT sent_at, id FROM messages WHERE chat = k.chat ORDER BY sent_at DESC, id DESC LIMIT 1) n
            UNION ALL SELECT 2, c.chat::text, NULL, m.user_id::text, NULL, c.declared, m.declared, m.inferred
                FROM chats c LEFT JOIN chat_members m ON m.chat = c.chat WHERE c.chat = ANY(p_chats)
            UNION ALL SELECT 3, r.chat::text, r.message_id::text, r.user_id::text, r.sent_at, NULL, NULL, NULL
                FROM read_positions r WHERE r.chat = ANY(p_chats)
            UNION ALL SELECT 4, p.chat::text, NULL, p.user_id::text, p.until, NULL, NULL, NULL
                FROM presence p WHERE p.chat = ANY(p_chats)
            UNION ALL SELECT 5, p.chat::text, p.message_id::text, p.user_id::text, p.read_at, NULL, NULL, NULL
                FROM named k JOIN pending_reads p ON p.chat = k.chat AND p.message_id = k.id;
        END $$
        """

    /// Creates (or replaces) `herald_load_counters`: the users' unread counters (kind 0: user, chat,
    /// count), and per stored range (its 1-based `ordinal`) and sender the messages in it (kind 1),
    /// leaving out those the range's own user sent.
    static let counters = """
        CREATE OR REPLACE FUNCTION herald_load_counters(
            p_users text[], r_chat text[], r_user text[], r_low_at int8[], r_low_id text[], r_high_at int8[], r_high_id text[])
        RETURNS TABLE (kind integer, ordinal int8, user_id text, chat text, amount int8)
        LANGUAGE plpgsql SET random_page_cost = \(pageCost) AS $$
        #variable_conflict use_column
        BEGIN
            RETURN QUERY
            SELECT 0, 0::int8, u.user_id::text, u.chat::text, u.unread::int8
                FROM unread_counters u WHERE u.user_id = ANY(p_users) AND u.unread <> 0
            UNION ALL SELECT 1, k.i, m.sender::text, NULL, count(*)
                FROM unnest(r_chat, r_user, r_low_at, r_low_id, r_high_at, r_high_id)
                    WITH ORDINALITY AS k(chat, user_id, low_at, low_id, high_at, high_id, i)
                JOIN messages m ON m.chat = k.chat AND (m.sent_at, m.id) > (k.low_at, k.low_id COLLATE "C")
                    AND (m.sent_at, m.id) <= (k.high_at, k.high_id COLLATE "C") AND m.sender <> k.user_id
                GROUP BY k.i, m.sender;
        END $$
        """
}
