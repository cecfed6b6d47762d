import HeraldPluginAPI
import Yams

/// Keyed access to a YAML mapping; records every key asked for.
struct YAMLKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let mapping: Node.Mapping
    let decoder: YAMLNodeDecoder

    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { mapping.keys.compactMap { $0.string.flatMap(Key.init(stringValue:)) } }

    func contains(_ key: Key) -> Bool {
        decoder.session.noteRequest(key.stringValue, at: codingPath)
        return mapping[key.stringValue] != nil
    }

    private func childDecoder(_ key: Key) throws -> YAMLNodeDecoder {
        decoder.session.noteRequest(key.stringValue, at: codingPath)
        guard let node = mapping[key.stringValue] else {
            throw decoder.session.error("missing required key \"\(key.stringValue)\"", node: decoder.node, path: codingPath)
        }
        return decoder.child(node, key: key)
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        decoder.session.noteRequest(key.stringValue, at: codingPath)
        return mapping[key.stringValue].map { decoder.child($0, key: key).isNull } ?? true
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try childDecoder(key).decode(type) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try childDecoder(key).decode(type) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try childDecoder(key).decode(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try childDecoder(key).decode(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try childDecoder(key).decode(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try childDecoder(key).decode(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try childDecoder(key).decode(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try childDecoder(key).decode(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try childDecoder(key).decode(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try childDecoder(key).decode(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try childDecoder(key).decode(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try childDecoder(key).decode(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try childDecoder(key).decode(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try childDecoder(key).decode(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try childDecoder(key).decode(type) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey> {
        try childDecoder(key).container(keyedBy: type)
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try childDecoder(key).unkeyedContainer()
    }
    func superDecoder() throws -> any Decoder { decoder }
    func superDecoder(forKey key: Key) throws -> any Decoder { try childDecoder(key) }
}

/// Sequential access to a YAML list.
struct YAMLUnkeyedContainer: UnkeyedDecodingContainer {
    let items: [Node]
    let decoder: YAMLNodeDecoder
    private(set) var currentIndex = 0

    init(items: [Node], decoder: YAMLNodeDecoder) {
        self.items = items
        self.decoder = decoder
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    private mutating func next() throws -> YAMLNodeDecoder {
        guard !isAtEnd else {
            throw decoder.session.error("list has only \(items.count) entries", node: decoder.node, path: codingPath)
        }
        defer { currentIndex += 1 }
        return decoder.child(items[currentIndex], key: AnyCodingKey(intValue: currentIndex))
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, decoder.child(items[currentIndex], key: AnyCodingKey(intValue: currentIndex)).isNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next().decode(type) }
    mutating func decode(_ type: String.Type) throws -> String { try next().decode(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try next().decode(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try next().decode(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try next().decode(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next().decode(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next().decode(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next().decode(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next().decode(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next().decode(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next().decode(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next().decode(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next().decode(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next().decode(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decode(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }
    mutating func superDecoder() throws -> any Decoder { try next() }
}
