import Foundation
public import HeraldPluginAPI

/// The `type: exec` source section: a long-lived child process speaking Herald's exec protocol
/// (plugins/exec/PROTOCOL.md) on stdin/stdout.
public struct ExecSourceConfiguration: SourceConfiguration, Decodable {
    /// The program and its arguments (the program is looked up in PATH unless it contains a `/`).
    public var command: [String]
    /// Extra environment variables for the child (added to Herald's own).
    public var environment: [String: String]
    /// Events read but not yet acknowledged, at most; the child's writes block beyond it.
    public var maxUnacked: Int
    /// Longer lines are dead-lettered (`oversize`) and skipped.
    public var maxLineBytes: Int
    /// Seconds to wait for the child's hello line.
    public var handshakeTimeoutSeconds: Double

    enum CodingKeys: String, CodingKey {
        case command, environment = "env", maxUnacked = "max_unacked", maxLineBytes = "max_line_bytes"
        case handshakeTimeoutSeconds = "handshake_timeout_s"
    }

    /// Decodes the section.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        command = try container.decode([String].self, forKey: .command)
        environment = try container.decodeIfPresent([String: String].self, forKey: .environment) ?? [:]
        maxUnacked = try container.decodeIfPresent(Int.self, forKey: .maxUnacked) ?? 1000
        maxLineBytes = try container.decodeIfPresent(Int.self, forKey: .maxLineBytes) ?? 64 * 1024
        handshakeTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .handshakeTimeoutSeconds) ?? 10
    }

    /// Offline checks.
    public func validate() throws(ConfigurationError) {
        guard let program = command.first, !program.isEmpty else { throw ConfigurationError("must name a program", keyPath: "command") }
        if program.contains("/"), !FileManager.default.isExecutableFile(atPath: program) {
            throw ConfigurationError("\(program) is not an executable file", keyPath: "command[0]")
        }
        guard (1...100_000).contains(maxUnacked) else { throw ConfigurationError("must be between 1 and 100000", keyPath: "max_unacked") }
        guard (64...(16 << 20)).contains(maxLineBytes) else { throw ConfigurationError("must be between 64 and 16777216", keyPath: "max_line_bytes") }
        guard handshakeTimeoutSeconds > 0 else { throw ConfigurationError("must be > 0", keyPath: "handshake_timeout_s") }
    }

    /// Builds the source.
    public func makeSource(name: String) throws(ConfigurationError) -> any SourceAdapter {
        ExecSource(name: name, configuration: self, normaliser: normaliser(name))
    }

    /// Builds the replay normaliser.
    public func makeReplayNormaliser(name: String) throws(ConfigurationError) -> any ReplayNormaliser { normaliser(name) }

    func normaliser(_ name: String) -> ExecNormaliser {
        ExecNormaliser(adapter: name, decoder: EventPayloadDecoder(maxPayloadBytes: maxLineBytes))
    }
}

/// The exec family's descriptor, for the registry.
public enum ExecAdapters {
    /// `type: exec` under `sources`.
    public static let source = SourceDescriptor(
        type: "exec", summary: "Runs a plugin process in any language; events as JSON lines on its stdout, acks after commit on its stdin.",
        options: [
            AdapterOption("command", .strings, required: true, "Program and arguments (looked up in PATH unless it contains /)"),
            AdapterOption("env", .stringMap, "Extra environment variables for the plugin"),
            AdapterOption("max_unacked", .integer, default: "1000", "Events read but not answered, at most"),
            AdapterOption("max_line_bytes", .integer, default: "65536", "Longer lines are dead-lettered"),
            AdapterOption("handshake_timeout_s", .number, default: "10", "Seconds to wait for the plugin's hello"),
        ],
        decode: { try ExecSourceConfiguration(from: $0) })
}
