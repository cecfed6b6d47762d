public import HeraldPluginAPI

/// A topic with `{name}` placeholders, each standing for one whole topic level:
/// `chats/{chat}/messages` subscribes to `chats/+/messages` and captures `chat`.
public struct TopicTemplate: Sendable, Hashable, CustomStringConvertible {
    private enum Level: Hashable {
        case literal(String)
        case capture(String)
    }

    private let levels: [Level]
    /// The template as written.
    public let description: String

    /// Parses a template.
    /// - Throws: when a placeholder is not a whole level, is empty, or repeats, or wildcards are used.
    public init(_ text: String) throws(ConfigurationError) {
        var levels: [Level] = []
        var names: Set<String> = []
        for level in text.split(separator: "/", omittingEmptySubsequences: false).map(String.init) {
            if level.hasPrefix("{") && level.hasSuffix("}") && level.count > 2 {
                let name = String(level.dropFirst().dropLast())
                guard names.insert(name).inserted else {
                    throw ConfigurationError("placeholder {\(name)} appears twice in \"\(text)\"")
                }
                levels.append(.capture(name))
            } else if level.contains("{") || level.contains("}") || level.contains("+") || level.contains("#") {
                throw ConfigurationError("\"\(level)\" in \"\(text)\": placeholders must be whole levels like {chat}; wildcards are not allowed")
            } else {
                levels.append(.literal(level))
            }
        }
        guard !text.isEmpty else { throw ConfigurationError("topic must not be empty") }
        self.levels = levels
        self.description = text
    }

    /// Placeholder names in order.
    public var captureNames: [String] {
        levels.compactMap { if case .capture(let name) = $0 { name } else { nil } }
    }

    /// The MQTT subscription filter (`+` for every placeholder).
    public var filter: String {
        levels.map { if case .literal(let text) = $0 { text } else { "+" } }.joined(separator: "/")
    }

    /// Matches a concrete topic. - Returns: the captured values, or `nil` when it does not match.
    /// Walks the topic's UTF-8 bytes once (it runs for every inbound message).
    public func match(_ topic: String) -> [String: String]? {
        let bytes = topic.utf8
        var captures: [String: String] = [:]
        var levelIndex = 0
        var levelStart = bytes.startIndex
        var index = bytes.startIndex
        while true {
            let atEnd = index == bytes.endIndex
            if atEnd || bytes[index] == UInt8(ascii: "/") {
                guard levelIndex < levels.count else { return nil }
                let part = bytes[levelStart..<index]
                switch levels[levelIndex] {
                case .literal(let text): guard text.utf8.elementsEqual(part) else { return nil }
                case .capture(let name):
                    guard !part.isEmpty else { return nil }
                    captures[name] = String(Substring(part))
                }
                levelIndex += 1
                if atEnd { break }
                levelStart = bytes.index(after: index)
            }
            index = bytes.index(after: index)
        }
        return levelIndex == levels.count ? captures : nil
    }

    /// Fills every placeholder with `value`: an output topic's `{user}`. A sink calls this for every
    /// output, so it needs no dictionary of values.
    public func render(filling value: String) -> String {
        render { _ in value }
    }

    /// Fills placeholders (for output topics). Unknown placeholders stay as written.
    public func render(_ values: [String: String]) -> String {
        render { name in values[name] ?? "{\(name)}" }
    }

    /// Appends the levels to one string, each placeholder replaced by `value(name)`.
    private func render(_ value: (_ name: String) -> String) -> String {
        var topic = ""
        for (index, level) in levels.enumerated() {
            if index > 0 { topic += "/" }
            switch level {
            case .literal(let text): topic += text
            case .capture(let name): topic += value(name)
            }
        }
        return topic
    }
}
