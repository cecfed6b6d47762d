public import HeraldCore
public import HeraldPluginAPI
import NIOCore
import PostgresNIO
import Synchronization

extension PostgresChatStore {
    /// Up to `limit` outbox entries for `sink` after `after`, oldest first.
    public func pendingOutputs(sink: String, after: Int64, limit: Int) throws -> [OutboxEnvelope] {
        let cursor = OutboxPack.place(of: after)
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(sink)
        bindings.append(cursor.pack)
        bindings.append(cursor.position + 1)
        bindings.append(limit)
        let query = PostgresQuery(unsafeSQL: "SELECT * FROM herald_pending_outputs($1, $2, $3, $4)", binds: bindings)
        return try read { session in
            var envelopes: [OutboxEnvelope] = []
            for row in try session.query(query) {
                var columns = RowColumns(row)
                let seq = try columns.next(Int64.self), createdAt = try columns.next(Int64.self)
                let delivered = try columns.next(Int.self), attempts = try columns.next(Int.self)
                let first = try columns.next(Int.self), entries = try columns.next(ByteBuffer.self)
                for (position, entry) in try OutboxPack.entries(entries, from: first) where envelopes.count < limit {
                    let sequence = OutboxPack.sequence(pack: seq, position: position)
                    guard let kind = OutputKind(rawValue: entry.kind) else {
                        throw PostgresStoreError.statement("outbox entry \(sequence) has unknown kind \(entry.kind)")
                    }
                    envelopes.append(OutboxEnvelope(sequence: sequence, recipient: UserID(entry.recipient), kind: kind,
                                                    payload: entry.payload, createdAt: Timestamp(milliseconds: createdAt),
                                                    attempts: position == delivered ? attempts : 0))
                }
            }
            return envelopes
        }
    }

    /// A sink's packs with outputs after a sequence, oldest first, as many as hold `limit` of them, read by
    /// `herald_pending_outputs` (``PostgresReadFunctions/deliveryReads``, whose parameters these are: $1 sink,
    /// $2 and $3 the pack and the place in it where the outputs start, $4 limit): a range of the key,
    /// (sink, seq). `first` is the first output of a pack to deliver; the packs past the first `limit`
    /// outputs are left out before their entries are read. The function holds a copy made when a migration
    /// defined it: a change here needs a migration that defines it anew.
    static let pendingOutputsSQL = """
        SELECT seq, created_at, delivered, attempts, first, entries FROM (
            SELECT *, sum(outputs - first) OVER (ORDER BY seq) - (outputs - first) AS before FROM (
                SELECT seq, created_at, outputs, delivered, attempts, entries,
                       GREATEST(delivered, CASE WHEN seq = $2 THEN $3 ELSE 0 END) AS first
                FROM outbox_packs WHERE sink = $1 AND seq >= $2 ORDER BY seq LIMIT $4 + 1) AS packs
            WHERE outputs > first) AS counted
        WHERE before < $4 ORDER BY seq
        """

    /// Marks the delivered outputs. A pack's outputs are delivered in order from its first undelivered
    /// one, so a pack keeps how many at its front are delivered, and goes when all are. With several
    /// writers a pack with a lower sequence may commit after a higher one was delivered, so nothing is
    /// removed by range; and within a pack only the run of delivered outputs that joins its delivered
    /// front counts (an output after a gap is delivered again: at least once).
    public func removeOutputs(sink: String, delivered: [Int64]) throws {
        var positions: [Int64: [Int]] = [:]
        for sequence in delivered {
            let place = OutboxPack.place(of: sequence)
            positions[place.pack, default: []].append(place.position)
        }
        guard !positions.isEmpty else { return }
        let packs = positions.keys.sorted()
        var from: [Int] = [], through: [Int] = []
        for pack in packs {
            let sorted = (positions[pack] ?? []).sorted()
            var end = sorted[0] + 1
            for position in sorted.dropFirst() where position == end { end += 1 }
            from.append(sorted[0])
            through.append(end)
        }
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(sink)
        bindings.append(packs)
        bindings.append(from)
        bindings.append(through)
        let query = PostgresQuery(unsafeSQL: "SELECT herald_remove_outputs($1, $2, $3::int4[], $4::int4[])", binds: bindings)
        try read { session in try session.execute(query) }
        removedSinceVacuum.add(delivered.count, ordering: .relaxed)
    }

    /// Removes the packs delivered to their end and moves the others' delivered count forward ($1 sink,
    /// $2 packs, $3 and $4 the run of each pack's outputs delivered, from and through). A run counts where
    /// it joins the pack's delivered front. The two statements touch different packs, and each names their
    /// keys (`seq = ANY($2)`) so that any plan reads them by key, whatever the join. `herald_remove_outputs`
    /// (``PostgresReadFunctions/deliveryRemovals``) holds a copy made when a migration defined it: a change
    /// here needs a migration that defines it anew.
    static let removeOutputsSQL = """
        WITH done AS (SELECT * FROM unnest($2::int8[], $3::int4[], $4::int4[]) AS d(seq, first, through)),
        gone AS (DELETE FROM outbox_packs p USING done d
                 WHERE p.sink = $1 AND p.seq = ANY($2::int8[]) AND p.seq = d.seq AND d.first <= p.delivered AND d.through >= p.outputs)
        UPDATE outbox_packs p SET delivered = d.through, attempts = 0 FROM done d
        WHERE p.sink = $1 AND p.seq = ANY($2::int8[]) AND p.seq = d.seq AND d.first <= p.delivered AND d.through > p.delivered
            AND d.through < p.outputs
        """

    /// Several writers: an entry may commit below one a dispatcher has read.
    public var outboxFollowsCommitOrder: Bool { false }

    /// Counts a failed attempt for the entries (the first undelivered output of their packs).
    public func recordFailedAttempt(sink: String, sequences: [Int64]) throws {
        let packs = sequences.map { OutboxPack.place(of: $0).pack }
        guard !packs.isEmpty else { return }
        try read { session in
            try session.execute("UPDATE outbox_packs SET attempts = attempts + 1 WHERE sink = \(sink) AND seq = ANY(\(packs))")
        }
    }

    /// Dead-lettered inputs not yet replayed.
    public func openDeadLetterCount() throws -> Int {
        try read { session in
            try session.query("SELECT count(*) FROM dead_letters WHERE replayed_at IS NULL").map { try $0.decode(Int.self) }.first ?? 0
        }
    }

    /// Undelivered entries per sink (sinks with none are left out).
    public func outboxDepth() throws -> [String: Int] {
        try read { session in
            var depth: [String: Int] = [:]
            for row in try session.query("SELECT sink, sum(outputs - delivered)::int8 FROM outbox_packs GROUP BY sink") {
                let (sink, count) = try row.decode((String, Int).self)
                depth[sink] = count
            }
            return depth
        }
    }

    /// Dead-lettered inputs, oldest first.
    public func deadLetters(limit: Int, includeReplayed: Bool) throws -> [DeadLetter] {
        try read { session in
            try session.query("""
                SELECT id, adapter, origin, reason, detail, raw, raw_size, received_at, replayed_at FROM dead_letters
                WHERE \(includeReplayed) OR replayed_at IS NULL ORDER BY id LIMIT \(limit)
                """).map { row in
                let (id, adapter, origin, reason, detail, raw, rawSize, receivedAt, replayedAt) =
                    try row.decode((Int64, String, String, String, String, ByteBuffer, Int, Int64, Int64?).self)
                return DeadLetter(id: id, rejection: Rejection(RejectionReason(rawValue: reason) ?? .malformedJSON, detail),
                                  provenance: Provenance(adapter: adapter, origin: origin, rawSize: rawSize,
                                                         receivedAt: Timestamp(milliseconds: receivedAt)),
                                  raw: Array(buffer: raw), replayedAt: replayedAt.map { Timestamp(milliseconds: $0) })
            }
        }
    }

    /// Marks a dead-lettered input as replayed successfully.
    public func markReplayed(deadLetter id: Int64, at time: Timestamp) throws {
        try read { session in try session.execute("UPDATE dead_letters SET replayed_at = \(time.milliseconds) WHERE id = \(id)") }
    }

    /// Removes up to `limit` selected dead letters, oldest first.
    public func purgeDeadLetters(_ selection: DeadLetterSelection, limit: Int) throws -> Int {
        try read { session in
            try session.execute(Self.selecting(selection, "DELETE FROM dead_letters WHERE id IN (SELECT id FROM dead_letters WHERE ",
                                               " ORDER BY id LIMIT \(limit))"))
        }
    }

    /// How many dead letters `selection` takes.
    public func deadLetterCount(_ selection: DeadLetterSelection) throws -> Int {
        try read(unlimited: true) { session in
            try session.query(Self.selecting(selection, "SELECT count(*) FROM dead_letters WHERE ", ""))
                .map { try $0.decode(Int.self) }.first ?? 0
        }
    }

    /// `before`, the condition of `selection` over `dead_letters` with its values bound, then `after`
    /// (neither binds a value).
    private static func selecting(_ selection: DeadLetterSelection, _ before: String, _ after: String) -> PostgresQuery {
        let received = selection.receivedBefore?.milliseconds
        var query: PostgresQuery = """
            (NOT \(selection.replayedOnly) OR replayed_at IS NOT NULL) AND (\(received)::int8 IS NULL OR received_at < \(received))
            AND (\(selection.adapter)::text IS NULL OR adapter = \(selection.adapter))
            """
        query.sql = before + query.sql + after
        return query
    }

    /// A source's committed checkpoint.
    public func checkpoint(source: String, key: String) throws -> String? {
        try read { session in
            try session.query("SELECT value FROM source_checkpoints WHERE source = \(source) AND key = \(key)")
                .map { try $0.decode(String.self) }.first
        }
    }

    /// Moves an undeliverable output to the dead-letter queue, in one transaction.
    public func deadLetterOutput(_ envelope: OutboxEnvelope, sink: String, rejection: Rejection, at time: Timestamp) throws {
        let origin = "outbox/\(envelope.sequence) \(envelope.kind.rawValue) for \(envelope.recipient)"
        let place = OutboxPack.place(of: envelope.sequence)
        // The output is its pack's first undelivered one (the dispatcher removed what it delivered before
        // it): the pack goes if it was the last, else its delivered count moves past it.
        try read { session in
            try session.query("""
                WITH gone AS (DELETE FROM outbox_packs
                              WHERE sink = \(sink) AND seq = \(place.pack) AND delivered = \(place.position) AND outputs = \(place.position + 1)),
                passed AS (UPDATE outbox_packs SET delivered = \(place.position + 1), attempts = 0
                           WHERE sink = \(sink) AND seq = \(place.pack) AND delivered = \(place.position) AND outputs > \(place.position + 1))
                INSERT INTO dead_letters (adapter, origin, reason, detail, raw, raw_size, received_at)
                VALUES (\(sink), \(origin), \(rejection.reason.rawValue), \(rejection.detail), \(ByteBuffer(bytes: envelope.payload)),
                        \(envelope.payload.count), \(time.milliseconds))
                """)
        }
    }
}
