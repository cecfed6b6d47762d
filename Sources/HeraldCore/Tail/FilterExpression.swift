import Foundation
public import HeraldPluginAPI

/// A small boolean language over an event's fields, for `herald tail --where`:
///
///     message.from == "alice" && chat ~ "team-*"
///     !(type ~ "chat.*") || user != "bot"
///
/// Comparisons: `==`, `!=`, `~` (glob with `*` and `?`), `!~`. Combinators: `&&`, `||`, `!`, parentheses.
/// Values are double-quoted strings (`\"` and `\\` escape). A field can have several values (`user`,
/// `message.to`, `members`): `==` and `~` hold if any value matches, `!=` and `!~` if none does.
public indirect enum FilterExpression: Hashable, Sendable, CustomStringConvertible {
    /// `field op "value"`
    case comparison(field: FilterField, op: ComparisonOperator, value: String)
    /// `lhs && rhs`
    case and(FilterExpression, FilterExpression)
    /// `lhs || rhs`
    case or(FilterExpression, FilterExpression)
    /// `!expression`
    case not(FilterExpression)

    /// The expression in a form that parses back to the same tree, with only the parentheses it needs
    /// (so printing never nests deeper than the parser allows for what it parsed).
    public var description: String { printed(within: 0) }

    /// Binding strength: `||` 1, `&&` 2, `!` and comparisons 3.
    private var precedence: Int {
        switch self {
        case .or: 1
        case .and: 2
        case .not, .comparison: 3
        }
    }

    /// The text, parenthesised when the context binds tighter. Both operators group to the left, so a
    /// right operand of the same operator keeps its parentheses.
    private func printed(within context: Int) -> String {
        let text: String
        switch self {
        case .comparison(let field, let op, let value):
            let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            text = "\(field.rawValue) \(op.rawValue) \"\(escaped)\""
        case .and(let lhs, let rhs): text = "\(lhs.printed(within: 2)) && \(rhs.printed(within: 3))"
        case .or(let lhs, let rhs): text = "\(lhs.printed(within: 1)) || \(rhs.printed(within: 2))"
        case .not(let inner): text = "!" + inner.printed(within: 3)
        }
        return precedence < context ? "(\(text))" : text
    }

    /// Evaluates against a tailed record.
    public func matches(_ record: TailRecord) -> Bool {
        switch self {
        case .comparison(let field, let op, let value):
            let values = field.values(in: record)
            switch op {
            case .equal: return values.contains(value)
            case .notEqual: return !values.contains(value)
            case .glob: return values.contains { Glob.matches($0, pattern: value) }
            case .notGlob: return !values.contains { Glob.matches($0, pattern: value) }
            }
        case .and(let lhs, let rhs): return lhs.matches(record) && rhs.matches(record)
        case .or(let lhs, let rhs): return lhs.matches(record) || rhs.matches(record)
        case .not(let inner): return !inner.matches(record)
        }
    }
}

/// Comparison operators.
public enum ComparisonOperator: String, Hashable, Sendable, CaseIterable {
    /// Equal.
    case equal = "=="
    /// Not equal.
    case notEqual = "!="
    /// Glob match.
    case glob = "~"
    /// No glob match.
    case notGlob = "!~"
}

/// The fields a filter can read.
public enum FilterField: String, Hashable, Sendable, CaseIterable {
    /// Event kind, e.g. `message.received`.
    case type
    /// The chat.
    case chat
    /// Source adapter name.
    case source
    /// Adapter-specific origin (MQTT topic, URL).
    case origin
    /// Anyone the event involves: sender, recipients, reader, member, focused user.
    case user
    /// Message id.
    case messageID = "message.id"
    /// Message sender.
    case messageFrom = "message.from"
    /// Message recipients.
    case messageTo = "message.to"
    /// Message text.
    case messageBody = "message.body"
    /// Reader of a `messages.read`.
    case readReader = "read.reader"
    /// Read position of a `messages.read`.
    case readUpTo = "read.up_to"
    /// Members of a `chat.created`.
    case members

    /// The field's values in a record (empty when the event has no such field).
    public func values(in record: TailRecord) -> [String] {
        let event = record.event
        switch self {
        case .type: return [event.kind.rawValue]
        case .chat: return [event.chat.rawValue]
        case .source: return [record.provenance.adapter]
        case .origin: return [record.provenance.origin]
        case .user: return event.involvedUsers.map(\.rawValue)
        case .messageID, .messageFrom, .messageTo, .messageBody:
            guard case .messageReceived(let message) = event else { return [] }
            switch self {
            case .messageID: return [message.id.rawValue]
            case .messageFrom: return [message.sender.rawValue]
            case .messageTo: return (message.recipients ?? []).map(\.rawValue)
            default: return [message.body]
            }
        case .readReader, .readUpTo:
            guard case .messagesRead(let read) = event else { return [] }
            return [self == .readReader ? read.reader.rawValue : read.upTo.rawValue]
        case .members:
            guard case .chatCreated(let created) = event else { return [] }
            return created.members.map(\.rawValue)
        }
    }
}

extension ChatEvent {
    /// Everyone the event involves.
    public var involvedUsers: [UserID] {
        switch self {
        case .messageReceived(let message): [message.sender] + (message.recipients ?? [])
        case .messagesRead(let read): [read.reader]
        case .chatCreated(let created): created.members
        case .chatOpened(let focus), .chatClosed(let focus): [focus.user]
        }
    }
}

/// `*` matches any run of characters, `?` one character; everything else matches itself.
public enum Glob {
    /// Whether `text` matches `pattern`.
    public static func matches(_ text: String, pattern: String) -> Bool {
        let text = Array(text), pattern = Array(pattern)
        var t = 0, p = 0, star = -1, mark = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == "?" || pattern[p] == text[t] {
                t += 1
                p += 1
            } else if p < pattern.count, pattern[p] == "*" {
                star = p
                mark = t
                p += 1
            } else if star >= 0 {
                p = star + 1
                mark += 1
                t = mark
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}
