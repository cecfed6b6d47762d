import HeraldCore

/// Migration 7: the outbox stored in packs (``OutboxPack``), with a view that shows it a row per output.
///
/// `outbox_packs` holds the rows; `outbox` becomes a view of the outputs still to deliver, with the
/// columns the table had, so operators' queries and `herald store copy` go on as before: an `INSERT`
/// into the view stores each row as a pack of one.
enum PostgresOutboxSchema {
    /// The statements, in order.
    static let migration: [String] = [
        """
        CREATE TABLE outbox_packs (
            sink text COLLATE "C" NOT NULL, seq bigserial, created_at bigint NOT NULL,
            outputs integer NOT NULL, delivered integer NOT NULL DEFAULT 0, attempts integer NOT NULL DEFAULT 0,
            entries bytea NOT NULL,
            PRIMARY KEY (sink, seq))
        """,
        // The entries are JSON documents with lengths between them, stored as they come (compressing each
        // pack would cost the writer more than the bytes it saves on a local disk).
        "ALTER TABLE outbox_packs ALTER COLUMN entries SET STORAGE EXTERNAL",
        """
        CREATE FUNCTION herald_outbox_entry(recipient text, kind text, payload bytea) RETURNS bytea
        LANGUAGE sql IMMUTABLE STRICT AS $$
            SELECT int4send(octet_length(convert_to(recipient, 'UTF8'))) || convert_to(recipient, 'UTF8')
                || int4send(octet_length(convert_to(kind, 'UTF8'))) || convert_to(kind, 'UTF8')
                || int4send(octet_length(payload)) || payload
        $$
        """,
        """
        CREATE FUNCTION herald_outbox_entries(entries bytea)
        RETURNS TABLE (place integer, recipient text, kind text, payload bytea)
        LANGUAGE plpgsql IMMUTABLE STRICT AS $$
        DECLARE
            at integer := 0;
            size integer;
        BEGIN
            place := 0;
            WHILE at < length(entries) LOOP
                size := (get_byte(entries, at) << 24) | (get_byte(entries, at + 1) << 16) | (get_byte(entries, at + 2) << 8) | get_byte(entries, at + 3);
                recipient := convert_from(substring(entries FROM at + 5 FOR size), 'UTF8');
                at := at + 4 + size;
                size := (get_byte(entries, at) << 24) | (get_byte(entries, at + 1) << 16) | (get_byte(entries, at + 2) << 8) | get_byte(entries, at + 3);
                kind := convert_from(substring(entries FROM at + 5 FOR size), 'UTF8');
                at := at + 4 + size;
                size := (get_byte(entries, at) << 24) | (get_byte(entries, at + 1) << 16) | (get_byte(entries, at + 2) << 8) | get_byte(entries, at + 3);
                payload := substring(entries FROM at + 5 FOR size);
                at := at + 4 + size;
                RETURN NEXT;
                place := place + 1;
            END LOOP;
        END
        $$
        """,
        // Each undelivered output of the old table becomes a pack of one, in the same order.
        """
        INSERT INTO outbox_packs (sink, seq, created_at, outputs, attempts, entries)
        SELECT sink, seq, created_at, 1, attempts, herald_outbox_entry(recipient, kind, payload) FROM outbox ORDER BY sink, seq
        """,
        "SELECT setval(pg_get_serial_sequence('outbox_packs', 'seq'), (SELECT coalesce(max(seq), 0) + 1 FROM outbox_packs), false)",
        "DROP TABLE outbox",
        """
        CREATE VIEW outbox AS
        SELECT p.sink, (p.seq << \(OutboxPack.positionBits)) | e.place AS seq, e.recipient, e.kind, e.payload, p.created_at,
               CASE WHEN e.place = p.delivered THEN p.attempts ELSE 0 END AS attempts
        FROM outbox_packs p CROSS JOIN LATERAL herald_outbox_entries(p.entries) e WHERE e.place >= p.delivered
        """,
        """
        CREATE FUNCTION herald_outbox_insert() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO outbox_packs (sink, created_at, outputs, attempts, entries)
            VALUES (NEW.sink, NEW.created_at, 1, coalesce(NEW.attempts, 0), herald_outbox_entry(NEW.recipient, NEW.kind, NEW.payload));
            RETURN NEW;
        END
        $$
        """,
        "CREATE TRIGGER outbox_insert INSTEAD OF INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION herald_outbox_insert()",
        "DROP FUNCTION herald_write_batch",
        PostgresWriteFunction.definition(outbox: .packs),
    ]
}
