/// A secret value (password, token). Its description is redacted so it never reaches a log.
public struct Secret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret itself. Pass it only to the library that needs it.
    public let value: String

    /// Wraps a secret.
    public init(_ value: String) { self.value = value }

    /// Always `<redacted>`.
    public var description: String { "<redacted>" }
    /// Always `<redacted>`.
    public var debugDescription: String { "<redacted>" }
}

extension Secret: Decodable {
    /// Decodes a secret from a config string (after `${ENV_VAR}` interpolation), so config types hold it
    /// wrapped from the start.
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }
}
