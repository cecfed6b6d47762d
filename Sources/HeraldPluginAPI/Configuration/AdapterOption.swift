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
