import Foundation
public import HeraldPluginAPI
import Yams

/// Reads, decodes and validates a config file without touching the network.
/// Every error names the file, line, column and key path.
public struct ConfigurationLoader: Sendable {
    /// The adapter types that may appear in `type:`.
    public let registry: AdapterRegistry
    /// Variables for `${VAR}` interpolation.
    public let environment: [String: String]

    /// Creates a loader.
    public init(registry: AdapterRegistry, environment: [String: String]) {
        self.registry = registry
        self.environment = environment
    }

    /// Loads and validates the file at `path`.
    public func load(path: String) throws(ConfigurationError) -> HeraldConfiguration {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError("cannot read the file (does it exist and is it UTF-8?)", file: path)
        }
        return try load(text: text, file: path)
    }

    /// Loads and validates YAML text; `file` names it in errors.
    public func load(text: String, file: String) throws(ConfigurationError) -> HeraldConfiguration {
        let root: Node
        do {
            root = try Yams.compose(yaml: text) ?? Node.mapping(Node.Mapping([]))
        } catch let error as YamlError {
            throw Self.syntaxError(error, file: file)
        } catch {
            throw ConfigurationError("YAML error: \(error)", file: file)
        }
        let session = YAMLDecodingSession(file: file, environment: environment)
        let decoder = YAMLNodeDecoder(node: root, session: session, codingPath: [], userInfo: [.adapterRegistry: registry])
        let configuration: HeraldConfiguration
        do {
            configuration = try HeraldConfiguration(from: decoder)
        } catch let error as ConfigurationError {
            throw error
        } catch let error as UnknownAdapterType {
            let path = error.path + [AnyCodingKey(stringValue: "type")]
            throw session.error("unknown adapter type \"\(error.type)\"; known: \(error.known.joined(separator: ", "))",
                                node: Self.locate(path, in: root), path: path)
        } catch {
            throw ConfigurationError("\(error)", file: file)
        }
        if let unknown = session.unknownKeyError() { throw unknown }
        try validate(configuration, root: root, session: session)
        return configuration
    }

    private func validate(_ configuration: HeraldConfiguration, root: Node, session: YAMLDecodingSession) throws(ConfigurationError) {
        func place(_ error: ConfigurationError, under prefix: [any CodingKey]) -> ConfigurationError {
            var placed = error.nested(under: YAMLDecodingSession.pathString(prefix))
            let node = Self.locate(Self.parse(placed.keyPath), in: root)
            placed.file = session.file
            placed.line = node?.mark?.line
            placed.column = node?.mark?.column
            return placed
        }
        var names: Set<String> = []
        for (index, source) in configuration.sources.enumerated() {
            let prefix: [any CodingKey] = [AnyCodingKey(stringValue: "sources"), AnyCodingKey(intValue: index)]
            guard names.insert("source:" + source.name).inserted else {
                throw place(ConfigurationError("another source is already named \"\(source.name)\"", keyPath: "name"), under: prefix)
            }
            do { try source.settings.validate() } catch { throw place(error, under: prefix) }
        }
        for (index, sink) in configuration.sinks.enumerated() {
            let prefix: [any CodingKey] = [AnyCodingKey(stringValue: "sinks"), AnyCodingKey(intValue: index)]
            guard names.insert("sink:" + sink.name).inserted else {
                throw place(ConfigurationError("another sink is already named \"\(sink.name)\"", keyPath: "name"), under: prefix)
            }
            do { try sink.settings.validate() } catch { throw place(error, under: prefix) }
        }
        do { try configuration.store.validate() } catch { throw place(error, under: [AnyCodingKey(stringValue: "store")]) }
        do { try configuration.admin.validate() } catch { throw place(error, under: [AnyCodingKey(stringValue: "admin")]) }
        do { try configuration.instance.validate() } catch { throw place(error, under: [AnyCodingKey(stringValue: "instance")]) }
        let router = configuration.router
        guard router.presenceTTLSeconds > 0, (10...10_000).contains(router.previewLength) else {
            throw place(ConfigurationError("presence_ttl_s must be > 0 and preview_length 10…10000"), under: [AnyCodingKey(stringValue: "router")])
        }
        guard (1...10_000).contains(configuration.outbox.batchSize), configuration.outbox.drainTimeoutSeconds >= 0 else {
            throw place(ConfigurationError("batch_size must be 1…10000 and drain_timeout_s ≥ 0"), under: [AnyCodingKey(stringValue: "outbox")])
        }
    }

    /// Finds the node at a key path, for error positions.
    static func locate(_ path: [any CodingKey], in root: Node) -> Node? {
        var node = root
        for key in path {
            switch node {
            case .mapping(let mapping):
                guard let next = mapping[key.stringValue] else { return node }
                node = next
            case .sequence(let sequence):
                guard let index = key.intValue, index < sequence.count else { return node }
                node = sequence[sequence.index(sequence.startIndex, offsetBy: index)]
            default:
                return node
            }
        }
        return node
    }

    /// Parses `a.b[2].c` into coding keys.
    static func parse(_ keyPath: String) -> [any CodingKey] {
        var keys: [any CodingKey] = []
        for part in keyPath.split(separator: ".") {
            var name = Substring(part)
            var indices: [Int] = []
            while let open = name.lastIndex(of: "["), name.hasSuffix("]"), let index = Int(name[name.index(after: open)..<name.index(before: name.endIndex)]) {
                indices.insert(index, at: 0)
                name = name[..<open]
            }
            if !name.isEmpty { keys.append(AnyCodingKey(stringValue: String(name))) }
            keys += indices.map { AnyCodingKey(intValue: $0) as any CodingKey }
        }
        return keys
    }

    private static func syntaxError(_ error: YamlError, file: String) -> ConfigurationError {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _), .composer(_, let problem, let mark, _):
            return ConfigurationError("YAML syntax error: \(problem)", file: file, line: mark.line, column: mark.column)
        default:
            return ConfigurationError("YAML error: \(error)", file: file)
        }
    }
}
