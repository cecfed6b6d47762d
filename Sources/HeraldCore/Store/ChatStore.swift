public import HeraldPluginAPI

/// Where a message sits in its chat's order: messages are ordered by (sentAt, id).
public struct MessageKey: Hashable, Comparable, Sendable {
    /// Send time.
    public var sentAt: Timestamp
    /// Message id (tie-breaker).
    public var id: MessageID

    /// Creates a key.
    public init(sentAt: Timestamp, id: MessageID) {
        self.sentAt = sentAt
        self.id = id
    }

    /// Chat order.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.sentAt, lhs.id) < (rhs.sentAt, rhs.id)
    }
}

/// The chat store: messages, memberships, read positions, unread counters, presence, the outbox
/// and the dead-letter queue. Only the ``EventRouter`` changes the chat model, through ``write(_:)``.
///
/// Requirements for a backend (SQLite and PostgreSQL pass the same suite):
/// - ``write(_:)`` runs the body in one transaction: all of it commits or none does, and it is
///   durable when `write` returns. A body that throws ``StoreConflict`` may be run again.
/// - Reads never block the writer for long and see only committed data.
public protocol ChatStore: Sendable {
    /// Runs `body` in one write transaction.
    func write<T>(_ body: (any ChatTransaction) throws -> T) throws -> T
    /// Runs `body` in one write transaction like ``write(_:)``, but may return once it is committed and
    /// before it is durable, releasing the writer for the next transaction: the returned wait returns once
    /// it is durable. The default is ``write(_:)``, durable on return.
    func writeDeferringDurability<T>(_ body: (any ChatTransaction) throws -> T) throws -> (T, CommitDurability)
    /// Throws the reason the store would refuse a write now, changing nothing: what readiness asks
    /// between commits. An empty write by default; a database server that turned read-only under an open
    /// connection still commits an empty transaction, so a backend that can tell says so here.
    func checkWritable() throws

    /// A user's badge (unread total and per chat).
    func badge(for user: UserID) throws -> BadgeUpdate
    /// The badges of `users` from committed data, in as few queries as the backend can (a user with
    /// nothing unread has an empty badge).
    func badges(for users: [UserID]) throws -> [UserID: BadgeUpdate]
    /// Up to `limit` outbox entries for `sink` with a sequence above `after`, oldest first.
    func pendingOutputs(sink: String, after: Int64, limit: Int) throws -> [OutboxEnvelope]
    /// Removes `sink`'s `delivered` entries (ascending). A backend whose sequences follow commit order
    /// (``outboxFollowsCommitOrder``, SQLite) may remove every entry of the sink from the first to the
    /// last; one with several writers (PostgreSQL) removes no entry of another commit, because an entry
    /// with a lower sequence may commit later. Within one commit's entries, which a dispatcher delivers in
    /// order, PostgreSQL removes those from the first undelivered one up to the first gap.
    func removeOutputs(sink: String, delivered: [Int64]) throws
    /// Whether outbox entries commit in sequence order (one writer). A dispatcher then reads on from
    /// its position, and passes over the entries other sinks have left undelivered only once. Otherwise
    /// (several writers) an entry may commit below one already read, so a dispatcher reads from the start
    /// again whenever it runs dry, which the store must make cheap (PostgreSQL keys the outbox by sink).
    var outboxFollowsCommitOrder: Bool { get }
    /// Counts a failed delivery attempt for the entries.
    func recordFailedAttempt(sink: String, sequences: [Int64]) throws
    /// Number of undelivered entries per sink.
    func outboxDepth() throws -> [String: Int]
    /// Number of dead-lettered inputs not yet replayed. With ``outboxDepth()``, what a metrics scrape
    /// reads: neither counts the messages, a table that only grows.
    func openDeadLetterCount() throws -> Int
    /// Dead-lettered inputs, oldest first.
    func deadLetters(limit: Int, includeReplayed: Bool) throws -> [DeadLetter]
    /// Marks a dead-lettered input as replayed successfully.
    func markReplayed(deadLetter id: Int64, at time: Timestamp) throws
    /// Removes up to `limit` of the dead letters `selection` takes, oldest first, keeping the count of open
    /// ones right. Returns how many it removed.
    func purgeDeadLetters(_ selection: DeadLetterSelection, limit: Int) throws -> Int
    /// How many dead letters `selection` takes.
    func deadLetterCount(_ selection: DeadLetterSelection) throws -> Int
    /// Summary counts for tests, status and benchmarks.
    func statistics() throws -> StoreStatistics
    /// A source's committed checkpoint, or `nil`.
    func checkpoint(source: String, key: String) throws -> String?
    /// Moves an undeliverable output from `sink`'s outbox to the dead-letter queue, in one transaction.
    func deadLetterOutput(_ envelope: OutboxEnvelope, sink: String, rejection: Rejection, at time: Timestamp) throws

    /// Takes or renews the lease `name` for `holder` until `ttl` from now, unless another holder's
    /// lease is still running; returns whether `holder` holds it. A store only one process can use
    /// (SQLite) grants every lease.
    func holdLease(_ name: String, holder: String, ttl: Duration) throws -> Bool
    /// Gives the lease up if `holder` holds it, so another instance may take it at once.
    func releaseLease(_ name: String, holder: String) throws
    /// Every lease that has not expired, for status pages.
    func activeLeases() throws -> [LeaseRecord]

    /// Statements the last write transaction sent to a database server, from its start to its commit,
    /// or `nil` for a store inside the process (SQLite), where a statement is no round trip. The router
    /// records it per commit (`herald_store_statements_per_commit`): it must not grow with the batch.
    var statementsInLastWrite: Int? { get }
}

/// One lease as stored.
public struct LeaseRecord: Sendable, Hashable {
    /// What the lease is for: `outbox:SINK` or `source:NAME`.
    public var name: String
    /// The instance holding it.
    public var holder: String
    /// Milliseconds until it expires unless renewed.
    public var expiresInMilliseconds: Int64

    /// Creates a value.
    public init(name: String, holder: String, expiresInMilliseconds: Int64) {
        self.name = name
        self.holder = holder
        self.expiresInMilliseconds = expiresInMilliseconds
    }
}

extension ChatStore {
    /// ``write(_:)``: durable on return.
    public func writeDeferringDurability<T>(_ body: (any ChatTransaction) throws -> T) throws -> (T, CommitDurability) {
        (try write(body), .durable)
    }
    /// One process per store: every lease is granted.
    public func holdLease(_ name: String, holder: String, ttl: Duration) throws -> Bool { true }
    /// Nothing to give up.
    public func releaseLease(_ name: String, holder: String) throws {}
    /// No shared leases.
    public func activeLeases() throws -> [LeaseRecord] { [] }
    /// No database server to count round trips to.
    public var statementsInLastWrite: Int? { nil }
    /// An empty write transaction.
    public func checkWritable() throws { try write { _ in } }
    /// Each user's badge in turn.
    public func badges(for users: [UserID]) throws -> [UserID: BadgeUpdate] {
        var badges: [UserID: BadgeUpdate] = [:]
        for user in users { badges[user] = try badge(for: user) }
        return badges
    }
}

/// One write transaction, set-based: the router loads the state slice a batch touches in two calls,
/// applies the batch in memory, and writes the difference in one call. Each call costs a number of
/// statements that does not grow with the batch.
public protocol ChatTransaction {
    /// The committed state of the keys' chats and messages: which named messages are stored (and
    /// each chat's newest), memberships, read positions, presence, and reads waiting for the named
    /// messages. ``StateSlice/unread`` and ``StateSlice/ranges`` are left empty.
    func loadSlice(_ keys: SliceKeys) throws -> StateSlice
    /// The counters part of the slice, which depends on the rest: every unread counter of each of
    /// `users` into ``StateSlice/unread`` (a user without counters maps to an empty table), and the
    /// count and senders of the stored messages in each of `ranges` into ``StateSlice/ranges``.
    func loadCounters(users: Set<UserID>, ranges: [StoredRange], into slice: inout StateSlice) throws
    /// Whether and how the store takes a batch's new messages ahead of the rest of its delta
    /// (``storeMessagesAhead(_:)``), so that they are stored while the batch is applied.
    var messagesAhead: MessagesAhead { get }
    /// Stores (or starts storing) `messages`, the batch's new messages exactly as its delta will list them,
    /// before the batch is applied; throws ``StoreConflict`` if another writer stored one of them first.
    /// ``write(_:)`` then completes what is still under way and writes the rest of the delta, with any
    /// message the delta lists that did not go ahead. Called only when ``messagesAhead`` is not
    /// ``MessagesAhead/withTheDelta``.
    func storeMessagesAhead(_ messages: [NewMessage]) throws
    /// Writes a batch's changes. Throws ``StoreConflict`` when the store changed under the slice
    /// (another writer stored one of the batch's messages first).
    func write(_ delta: StoreDelta) throws
}

extension ChatTransaction {
    /// The messages are written with the rest of the delta.
    public var messagesAhead: MessagesAhead { .withTheDelta }

    /// The messages are written with the rest of the delta.
    public func storeMessagesAhead(_ messages: [NewMessage]) throws {}
}

/// How a store takes a batch's new messages before the batch is applied (they are known from its slice):
/// inserting them is a large part of a commit's writes, and the apply need not wait for it.
public enum MessagesAhead: Sendable {
    /// With the rest of the delta, in ``ChatTransaction/write(_:)``.
    case withTheDelta
    /// Sent to a server that stores them while the router applies the batch: ``ChatTransaction/storeMessagesAhead(_:)``
    /// returns at once.
    case sent
    /// Written by ``ChatTransaction/storeMessagesAhead(_:)`` before it returns, on the transaction's thread,
    /// while the router applies the batch on another.
    case written
}

/// The store changed between loading a slice and writing its delta: the batch is applied again from
/// a fresh slice.
public struct StoreConflict: Error, Hashable, Sendable, CustomStringConvertible {
    /// What differed.
    public var description: String

    /// Creates the error.
    public init(_ description: String) { self.description = description }

    /// Throws unless an insert of `expected` messages inserted all of them: a conflict-skipping insert
    /// (SQLite) that left some out found them stored by another writer first. A plain insert (PostgreSQL's)
    /// inserts all or fails on the key, which the store reports as a conflict itself.
    public static func check(inserted: Int, of expected: Int) throws(StoreConflict) {
        guard inserted == expected else { throw StoreConflict("\(expected - inserted) of \(expected) messages were stored meanwhile") }
    }
}

/// A chat's membership as stored: whether `chat.created` declared it, and both member sets.
public struct ChatMembership: Sendable, Hashable {
    /// `nil` when the chat is unknown.
    public var declared: Bool?
    /// Members named by `chat.created` events.
    public var declaredMembers: Set<UserID>
    /// Everyone who sent or received a message in the chat.
    public var inferredMembers: Set<UserID>

    /// Creates a value.
    public init(declared: Bool?, declaredMembers: Set<UserID>, inferredMembers: Set<UserID>) {
        self.declared = declared
        self.declaredMembers = declaredMembers
        self.inferredMembers = inferredMembers
    }

    /// The members that count: declared if the chat was created, else inferred.
    public var effective: Set<UserID> { declared == true ? declaredMembers : inferredMembers }
}

/// One dead-lettered input.
public struct DeadLetter: Sendable, Hashable {
    /// Row id.
    public var id: Int64
    /// Why it was rejected.
    public var rejection: Rejection
    /// Where it came from.
    public var provenance: Provenance
    /// The raw bytes.
    public var raw: [UInt8]
    /// When it was replayed successfully, if it was.
    public var replayedAt: Timestamp?

    /// Creates a value.
    public init(id: Int64, rejection: Rejection, provenance: Provenance, raw: [UInt8], replayedAt: Timestamp?) {
        self.id = id
        self.rejection = rejection
        self.provenance = provenance
        self.raw = raw
        self.replayedAt = replayedAt
    }
}

/// Row counts of the store.
public struct StoreStatistics: Sendable, Hashable {
    /// Stored messages.
    public var messages: Int
    /// Dead letters not yet replayed.
    public var deadLetters: Int
    /// Undelivered outbox entries.
    public var outbox: Int

    /// Creates a value.
    public init(messages: Int, deadLetters: Int, outbox: Int) {
        self.messages = messages
        self.deadLetters = deadLetters
        self.outbox = outbox
    }
}
