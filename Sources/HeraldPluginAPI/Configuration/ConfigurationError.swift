/// A configuration problem, located as precisely as Herald can: file, line, column and key path.
public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, as a sentence.
    public var message: String
    /// The key path, e.g. `sources[0].url`.
    public var keyPath: String
    /// The config file, once known.
    public var file: String?
    /// 1-based line, once known.
    public var line: Int?
    /// 1-based column, once known.
    public var column: Int?

    /// Creates an error at `keyPath` (relative to the adapter's section when thrown by an adapter).
    public init(_ message: String, keyPath: String = "", file: String? = nil, line: Int? = nil, column: Int? = nil) {
        self.message = message
        self.keyPath = keyPath
        self.file = file
        self.line = line
        self.column = column
    }

    /// `file:line:column: key.path: message`
    public var description: String {
        var location = file ?? "<config>"
        if let line { location += ":\(line)" }
        if let column { location += ":\(column)" }
        return keyPath.isEmpty ? "\(location): \(message)" : "\(location): \(keyPath): \(message)"
    }

    /// The same error with a key path prefix, e.g. when an adapter's error is placed in the whole file.
    public func nested(under prefix: String) -> ConfigurationError {
        var copy = self
        copy.keyPath = keyPath.isEmpty ? prefix : (keyPath.hasPrefix("[") ? prefix + keyPath : "\(prefix).\(keyPath)")
        return copy
    }
}
