import Foundation
import HeraldPluginAPI
import Yams

/// State shared by every container of one decode: the file name, the environment for `${VAR}`
/// interpolation, and the bookkeeping that finds misspelled keys (keys present in a mapping that no
/// `Decodable` type asked for).
final class YAMLDecodingSession {
    let file: String
    let environment: [String: String]
    private(set) var present: [String: [(key: String, mark: Mark?)]] = [:]
    private(set) var requested: [String: Set<String>] = [:]

    init(file: String, environment: [String: String]) {
        self.file = file
        self.environment = environment
    }

    func noteMapping(_ mapping: Node.Mapping, at path: [any CodingKey]) {
        let id = Self.pathString(path)
        guard present[id] == nil else { return }
        present[id] = mapping.map { ($0.key.string ?? "", $0.key.mark) }
    }

    func noteRequest(_ key: String, at path: [any CodingKey]) {
        requested[Self.pathString(path), default: []].insert(key)
    }

    /// The first key that no type asked for, as an error with a suggestion.
    func unknownKeyError() -> ConfigurationError? {
        for (path, keys) in present.sorted(by: { $0.key < $1.key }) {
            let asked = requested[path] ?? []
            for entry in keys where !asked.contains(entry.key) {
                var message = "unknown key \"\(entry.key)\""
                if let suggestion = asked.min(by: { Self.distance($0, entry.key) < Self.distance($1, entry.key) }),
                   Self.distance(suggestion, entry.key) <= max(2, entry.key.count / 3) {
                    message += "; did you mean \"\(suggestion)\"?"
                } else if !asked.isEmpty {
                    message += "; expected one of: \(asked.sorted().joined(separator: ", "))"
                }
                let keyPath = path.isEmpty ? entry.key : (entry.key.isEmpty ? path : "\(path).\(entry.key)")
                return ConfigurationError(message, keyPath: keyPath, file: file, line: entry.mark?.line, column: entry.mark?.column)
            }
        }
        return nil
    }

    func error(_ message: String, node: Node?, path: [any CodingKey]) -> ConfigurationError {
        ConfigurationError(message, keyPath: Self.pathString(path), file: file, line: node?.mark?.line, column: node?.mark?.column)
    }

    /// Replaces `${VAR}` and `${VAR:-default}`; `$$` is a literal `$`.
    func interpolate(_ text: String, node: Node, path: [any CodingKey]) throws(ConfigurationError) -> String {
        guard text.contains("$") else { return text }
        var result = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            let next = text.index(after: index)
            if character == "$", next < text.endIndex, text[next] == "$" {
                result.append("$")
                index = text.index(after: next)
            } else if character == "$", next < text.endIndex, text[next] == "{",
                      let close = text[next...].firstIndex(of: "}") {
                let body = String(text[text.index(after: next)..<close])
                let (name, fallback) = body.range(of: ":-").map { (String(body[..<$0.lowerBound]), String(body[$0.upperBound...])) }
                    ?? (body, nil)
                if let value = environment[name], !(value.isEmpty && fallback != nil) {
                    result += value
                } else if let fallback {
                    result += fallback
                } else {
                    throw error("environment variable \(name) is not set (use ${\(name):-default} for a default)", node: node, path: path)
                }
                index = text.index(after: close)
            } else {
                result.append(character)
                index = next
            }
        }
        return result
    }

    static func pathString(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }

    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// A coding key built from a string or an index.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        self.stringValue = "\(intValue)"
        self.intValue = intValue
    }
}
