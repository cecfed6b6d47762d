public import HeraldCore
public import HeraldPluginAPI
import NIOCore
import PostgresNIO
import Synchronization

extension PostgresChatStore {
    /// Up to `limit` outbox entries for `sink` after `after`, oldest first.
    public func pendingOutputs(sink: String, after: Int64, limit: Int) throws -> [OutboxEnvelope] {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(sink)
        bindings.append(after)
        bindings.append(limit)
        let query = PostgresQuery(unsafeSQL: Self.pendingOutputsSQL, binds: bindings)
        return try read { session in
            try session.query(query).map { row in
                var columns = RowColumns(row)
                let sequence = try columns.next(Int64.self), recipient = try columns.next(String.self)
                let kindName = try columns.next(String.self), payload = try columns.next(ByteBuffer.self)
                let createdAt = try columns.next(Int64.self), attempts = try columns.next(Int.self)
                guard let kind = OutputKind(rawValue: kindName) else {
                    throw PostgresStoreError.statement("outbox row \(sequence) has unknown kind \(kindName)")
                }
                return OutboxEnvelope(sequence: sequence, recipient: UserID(recipient), kind: kind, payload: Array(buffer: payload),
                                      createdAt: Timestamp(milliseconds: createdAt), attempts: attempts)
            }
        }
    }

    /// A sink's entries after a sequence, oldest first ($1 sink, $2 after, $3 limit): a range of the
    /// outbox's key, (sink, seq).
    static let pendingOutputsSQL = """
        SELECT seq, recipient, kind, payload, created_at, attempts FROM outbox WHERE sink = $1 AND seq > $2 ORDER BY seq LIMIT $3
        """

    /// Removes exactly the delivered entries: with several writers an entry with a lower sequence may
    /// commit after a higher one was delivered, so a range delete could take an undelivered entry.
    ///
    /// The statement scans the key's range from the lowest to the highest delivered sequence once and
    /// keeps the delivered ones with a hashed `= ANY` test (`seq + 0` keeps that test out of the index
    /// condition). Looking each sequence up in the key instead descends the index once per entry: about
    /// three times the work for the few thousand entries a purge holds.
    public func removeOutputs(sink: String, delivered: [Int64]) throws {
        guard let lowest = delivered.min(), let highest = delivered.max() else { return }
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(sink)
        bindings.append(lowest)
        bindings.append(highest)
        bindings.append(delivered)
        let query = PostgresQuery(unsafeSQL: Self.removeOutputsSQL, binds: bindings)
        try read { session in try session.execute(query) }
        removedSinceVacuum.add(delivered.count, ordering: .relaxed)
    }

    /// Deletes delivered entries ($1 sink, $2 lowest and $3 highest sequence, $4 every sequence).
    static let removeOutputsSQL = """
        DELETE FROM outbox WHERE sink = $1 AND seq BETWEEN $2 AND $3 AND seq + 0 = ANY($4)
        """

    /// Several writers: an entry may commit below one a dispatcher has read.
    public var outboxFollowsCommitOrder: Bool { false }

    /// Counts a failed attempt for the entries.
    public func recordFailedAttempt(sink: String, sequences: [Int64]) throws {
        guard !sequences.isEmpty else { return }
        try read { session in
            try session.execute("UPDATE outbox SET attempts = attempts + 1 WHERE sink = \(sink) AND seq = ANY(\(sequences))")
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
            for row in try session.query("SELECT sink, count(*) FROM outbox GROUP BY sink") {
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
        try read { session in
            try session.query("""
                WITH gone AS (DELETE FROM outbox WHERE sink = \(sink) AND seq = \(envelope.sequence) RETURNING seq)
                INSERT INTO dead_letters (adapter, origin, reason, detail, raw, raw_size, received_at)
                VALUES (\(sink), \(origin), \(rejection.reason.rawValue), \(rejection.detail), \(ByteBuffer(bytes: envelope.payload)),
                        \(envelope.payload.count), \(time.milliseconds))
                """)
        }
    }
}
