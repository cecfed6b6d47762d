import HeraldPluginAPI
public import Logging

/// `log:`
public struct LogSection: Decodable, Sendable {
    /// How each log line is written.
    public enum Format: String, Decodable, Sendable, CaseIterable {
        /// swift-log's text line: time, level, metadata, module and message.
        case text
        /// One JSON object per line (see ``JSONLogHandler``).
        case json
    }

    /// `trace`, `debug`, `info`, `notice`, `warning`, `error` or `critical`.
    public var level: Logger.Level = .info
    /// `text` or `json`.
    public var format: Format = .text

    init() {}

    /// Decodes the section.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        level = try container.decodeIfPresent(Logger.Level.self, forKey: AnyCodingKey(stringValue: "level")) ?? level
        format = try container.decodeIfPresent(Format.self, forKey: AnyCodingKey(stringValue: "format")) ?? format
    }
}
