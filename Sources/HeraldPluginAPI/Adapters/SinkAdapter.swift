public import Logging

/// A way outputs leave Herald (MQTT publish, webhook, …).
///
/// Requirements:
/// - `run(context:)` keeps the connection open until shutdown, reconnecting with ``SinkContext/reconnect``.
/// - `deliver(_:)` sends envelopes **in the order given** and returns how many of the leading
///   envelopes the far side has confirmed. The runtime deletes exactly those from the outbox and offers
///   the rest again later, so delivery is at least once and in order per user.
/// - When the far side is unreachable, `deliver` throws ``SinkError`` quickly instead of waiting, saying
///   how many envelopes it delivered first (``SinkError/confirmed``).
/// - An envelope that can never be delivered is reported with ``SinkError/undeliverable``; the runtime
///   dead-letters it. ``OutboxEnvelope/attempts`` tells a sink how often delivery failed before.
public protocol SinkAdapter: Sendable {
    /// The configured instance name (unique among sinks).
    var name: String { get }
    /// The output kinds this sink wants; the router queues only these for it.
    var accepts: Set<OutputKind> { get }
    /// Keeps the sink connected until ``SinkContext/shutdown`` fires.
    func run(context: SinkContext) async throws
    /// Delivers a batch in order; returns how many leading envelopes were confirmed.
    func deliver(_ batch: [OutboxEnvelope]) async throws(SinkError) -> Int
}

/// What the runtime gives a running sink.
public struct SinkContext: Sendable {
    /// A logger labelled with the sink's name.
    public var logger: Logger
    /// Fires once when the gateway starts shutting down.
    public var shutdown: ShutdownSignal
    /// The runtime's reconnect policy.
    public var reconnect: Backoff

    /// Creates a context.
    public init(logger: Logger, shutdown: ShutdownSignal, reconnect: Backoff = Backoff(baseSeconds: 0.2, capSeconds: 30)) {
        self.logger = logger
        self.shutdown = shutdown
        self.reconnect = reconnect
    }
}

/// One queued output as the outbox hands it to a sink: who it is for, its kind, and its client-facing
/// JSON (``OutputWireFormat``), ready to send as it is.
public struct OutboxEnvelope: Sendable, Hashable {
    /// Position in the outbox; increases with commit order. Stable across retries (use it as an id).
    public var sequence: Int64
    /// The user the output is for.
    public var recipient: UserID
    /// The output kind.
    public var kind: OutputKind
    /// The output as client-facing JSON.
    public var payload: [UInt8]
    /// When the output was committed.
    public var createdAt: Timestamp
    /// How many delivery attempts failed before this one.
    public var attempts: Int

    /// Creates an envelope.
    public init(sequence: Int64, recipient: UserID, kind: OutputKind, payload: [UInt8], createdAt: Timestamp, attempts: Int) {
        self.sequence = sequence
        self.recipient = recipient
        self.kind = kind
        self.payload = payload
        self.createdAt = createdAt
        self.attempts = attempts
    }

    /// The structured output, decoded from the payload.
    public func decodeOutput() throws -> Output {
        try OutputWireFormat.decode(kind: kind, recipient: recipient, payload: payload)
    }
}

/// A delivery attempt failed part-way. The runtime keeps the first `confirmed` envelopes as delivered
/// and then either retries the next one with jittered backoff (or after `retryAfterSeconds`), or, when
/// `undeliverable` is set, moves that one envelope to the dead-letter queue and goes on with the rest.
public struct SinkError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var description: String
    /// A delay the far side asked for (e.g. HTTP `Retry-After`), overriding the backoff.
    public var retryAfterSeconds: Double?
    /// How many leading envelopes of the batch were delivered before the failure.
    public var confirmed: Int
    /// The envelope after the confirmed ones can never be delivered (attempts exhausted, endpoint
    /// gone): dead-letter it instead of retrying.
    public var undeliverable: Bool

    /// Creates the error.
    public init(_ description: String, retryAfterSeconds: Double? = nil, confirmed: Int = 0, undeliverable: Bool = false) {
        self.description = description
        self.retryAfterSeconds = retryAfterSeconds
        self.confirmed = confirmed
        self.undeliverable = undeliverable
    }
}
