public import HeraldPluginAPI

/// One committed event as the live tail shows it: the event, where it came from, how long the
/// commit took, and (when asked for) the outputs it produced.
public struct TailRecord: Sendable {
    /// The event.
    public var event: ChatEvent
    /// Where and when it entered.
    public var provenance: Provenance
    /// When its transaction committed.
    public var committedAt: Timestamp
    /// Milliseconds from receipt to commit.
    public var commitLatencyMilliseconds: Int64
    /// Whether it changed the model (false for a duplicate).
    public var applied: Bool
    /// The outputs it produced.
    public var outputs: [Output]

    /// Creates a record.
    public init(event: ChatEvent, provenance: Provenance, committedAt: Timestamp, commitLatencyMilliseconds: Int64, applied: Bool,
                outputs: [Output]) {
        self.event = event
        self.provenance = provenance
        self.committedAt = committedAt
        self.commitLatencyMilliseconds = commitLatencyMilliseconds
        self.applied = applied
        self.outputs = outputs
    }
}

/// What a tail client asked for; evaluated on the server so a busy gateway ships only matches.
public struct TailFilter: Sendable, Hashable {
    /// Event kinds, as globs (`messages.*`); empty means all.
    public var types: [String] = []
    /// Chats; empty means all.
    public var chats: [String] = []
    /// Users involved (sender, recipient, reader, member); empty means all.
    public var users: [String] = []
    /// Source adapters; empty means all.
    public var sources: [String] = []
    /// An expression over fields.
    public var expression: FilterExpression?
    /// Keep one record in `sampleEvery` matches (1 keeps all).
    public var sampleEvery: Int = 1

    /// A filter that matches everything.
    public init() {}

    /// Whether a record matches (before sampling).
    public func matches(_ record: TailRecord) -> Bool {
        if !types.isEmpty, !types.contains(where: { Glob.matches(record.event.kind.rawValue, pattern: $0) }) { return false }
        if !chats.isEmpty, !chats.contains(record.event.chat.rawValue) { return false }
        if !sources.isEmpty, !sources.contains(record.provenance.adapter) { return false }
        if !users.isEmpty {
            let involved = record.event.involvedUsers.map(\.rawValue)
            if !users.contains(where: involved.contains) { return false }
        }
        return expression?.matches(record) ?? true
    }
}

extension TailFilter {
    /// The query parameters of `/v1/tail`: `type` (repeatable, globs), `chat`, `user`, `source` (repeatable),
    /// `where` (an expression), `sample` (`1/N`).
    public init(query: [(name: String, value: String)]) throws(FilterParser.SyntaxError) {
        self.init()
        for (name, value) in query {
            switch name {
            case "type": types.append(value)
            case "chat": chats.append(value)
            case "user": users.append(value)
            case "source": sources.append(value)
            case "where": expression = try FilterParser.parse(value)
            case "sample":
                let parts = value.split(separator: "/")
                if parts.count == 2, parts[0] == "1", let every = Int(parts[1]), every > 0 { sampleEvery = every }
            default: continue
            }
        }
    }

    /// The same filter as query parameters.
    public var query: [(name: String, value: String)] {
        types.map { ("type", $0) } + chats.map { ("chat", $0) } + users.map { ("user", $0) } + sources.map { ("source", $0) }
            + (expression.map { [("where", $0.description)] } ?? []) + (sampleEvery > 1 ? [("sample", "1/\(sampleEvery)")] : [])
    }
}
