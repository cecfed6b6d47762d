public import HeraldPluginAPI

/// Which dead letters a purge removes (`herald dlq purge`): every condition that is set must hold.
public struct DeadLetterSelection: Sendable, Hashable {
    /// Only those replayed successfully (`herald dlq replay`).
    public var replayedOnly: Bool
    /// Only those received before this time.
    public var receivedBefore: Timestamp?
    /// Only those of this adapter: the source that rejected an input, or the sink that gave up on an output.
    public var adapter: String?

    /// Creates a selection; with nothing set it takes every dead letter.
    public init(replayedOnly: Bool = false, receivedBefore: Timestamp? = nil, adapter: String? = nil) {
        self.replayedOnly = replayedOnly
        self.receivedBefore = receivedBefore
        self.adapter = adapter
    }
}
