/// Documents one configuration key of an adapter: for `herald adapters`, the JSON Schema editors use,
/// and the family README. Keys that are not described here are rejected by the schema, so the
/// description has to stay true (a test checks the shipped sample configs against it).
public struct AdapterOption: Sendable {
    /// The value's type.
    public indirect enum Kind: Sendable {
        /// Text (also `${VAR}` interpolation).
        case string
        /// A whole number.
        case integer
        /// Any number.
        case number
        /// `true` / `false`.
        case boolean
        /// One of fixed strings.
        case choice([String])
        /// A list of texts.
        case strings
        /// A mapping of text to text.
        case stringMap
        /// A nested mapping with its own options.
        case object([AdapterOption])
        /// A list of nested mappings.
        case objects([AdapterOption])
    }

    /// The key.
    public var key: String
    /// Its type.
    public var kind: Kind
    /// Whether it must be present.
    public var required: Bool
    /// The default, as written in YAML, when absent.
    public var defaultValue: String?
    /// One sentence.
    public var summary: String

    /// Describes an option.
    public init(_ key: String, _ kind: Kind, required: Bool = false, default defaultValue: String? = nil, _ summary: String) {
        self.key = key
        self.kind = kind
        self.required = required
        self.defaultValue = defaultValue
        self.summary = summary
    }

    /// The type as shown to people.
    public var typeName: String {
        switch kind {
        case .string: "string"
        case .integer: "integer"
        case .number: "number"
        case .boolean: "boolean"
        case .choice(let values): values.joined(separator: "|")
        case .strings: "list of strings"
        case .stringMap: "map of strings"
        case .object: "mapping"
        case .objects: "list of mappings"
        }
    }
}

extension AdapterOption {
    /// The `mapping` block every JSON-carrying source offers (see ``FieldMapping``).
    public static let fieldMapping = AdapterOption(
        "mapping", .object(["id", "from", "to", "body", "sent_at", "chat", "up_to", "read_at", "members", "state", "type", "user"]
            .map { AdapterOption($0, .string, "JSON pointer to \($0)") }), "JSON pointers for payloads in another shape")
    /// The `time_format` option.
    public static let timeFormat = AdapterOption("time_format", .choice(TimeFormat.allCases.map(\.rawValue)), default: "auto",
                                                 "How times are read")
}
