public import HeraldPluginAPI

/// The router's tunables.
public struct RouterPolicy: Sendable, Hashable {
    /// How long a `chat.opened` keeps a user "looking at" a chat unless renewed or closed, so a crashed
    /// client does not suppress notifications forever.
    public var presenceTTLMilliseconds: Int64
    /// The longest notification preview, in characters.
    public var previewLength: Int

    /// Creates a policy; defaults: 5 minutes, 120 characters.
    public init(presenceTTLMilliseconds: Int64 = 300_000, previewLength: Int = 120) {
        self.presenceTTLMilliseconds = presenceTTLMilliseconds
        self.previewLength = previewLength
    }
}

/// Which sinks receive which output kinds. Built from the configured sinks' `outputs`.
public struct OutputRouting: Sendable, Hashable {
    /// Sink names per output kind.
    public let sinks: [OutputKind: [String]]
    // The same per kind, for ``sinks(for:)``: every output is routed, and hashing a kind hashes its name.
    private let notificationSinks: [String]
    private let liveMessageSinks: [String]
    private let readReceiptSinks: [String]
    private let badgeSinks: [String]

    /// Creates a routing table.
    public init(sinks: [OutputKind: [String]] = [:]) {
        self.sinks = sinks
        notificationSinks = sinks[.notification] ?? []
        liveMessageSinks = sinks[.liveMessage] ?? []
        readReceiptSinks = sinks[.readReceipt] ?? []
        badgeSinks = sinks[.badge] ?? []
    }

    /// Creates the table from each sink's accepted kinds.
    public init(sinkAccepts: [(name: String, accepts: Set<OutputKind>)]) {
        var table: [OutputKind: [String]] = [:]
        for sink in sinkAccepts {
            for kind in OutputKind.allCases where sink.accepts.contains(kind) { table[kind, default: []].append(sink.name) }
        }
        self.init(sinks: table)
    }

    /// The sinks for one output.
    public func sinks(for output: Output) -> [String] {
        switch output {
        case .notification: notificationSinks
        case .liveMessage: liveMessageSinks
        case .readReceipt: readReceiptSinks
        case .badge: badgeSinks
        }
    }
}
