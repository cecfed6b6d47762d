import Foundation
import HeraldPluginAPI
import HeraldTestKit

/// Random JSON objects, payload mappings and damaged payloads for property tests of the payload decoder,
/// from a seed.
struct JSONDocumentGenerator {
    /// Keys that collide in every way two readers of a document could disagree on: the decoder's field
    /// names, keys that are canonically equal as strings but not as bytes (é precomposed and not, the
    /// Kelvin sign and K), keys a pointer must escape, array indices with and without a leading zero, the
    /// empty key.
    static let keys = ["id", "from", "to", "body", "sent_at", "chat", "type", "user", "state", "members", "up_to", "read_at",
                       "m", "K", "\u{212A}", "\u{E9}", "e\u{301}", "a/b", "~x", "0", "1", "01", ""]
    /// A few keys drawn more often, so pointers meet repeated and look-alike keys.
    static let nearKeys = ["m", "\u{212A}", "e\u{301}", "0"]
    static let texts = ["m1", "u1", "c1", "", "u/1", "x\"y", "back\\slash", "line\nbreak", "\u{E9}t\u{E9}", "\u{1F600}",
                        "message.received", "messages.read", "chat.created", "open", "closed", "2025-11-22T10:00:00.250Z"]
    static let numbers = ["0", "-0", "7", "-7", "1.5", "3.0", "1e3", "2E-2", "1700000000", "1700000000123", "123456789012345",
                          "1234567890123456", "9007199254740993", "1e400", "-1e400", "1" + String(repeating: "0", count: 320)]

    private var generator: SplitMix64
    /// How often a key is one of ``nearKeys``.
    let nearKeyShare: Double
    /// How often a value above the deepest levels is an object.
    let objectShare: Double

    init(seed: UInt64, nearKeyShare: Double = 0.5, objectShare: Double = 0.15) {
        generator = SplitMix64(seed: seed)
        self.nearKeyShare = nearKeyShare
        self.objectShare = objectShare
    }

    mutating func pick<T>(_ choices: [T]) -> T { choices[Int.random(in: 0..<choices.count, using: &generator)] }
    mutating func chance(_ share: Double) -> Bool { Double.random(in: 0..<1, using: &generator) < share }
    mutating func key() -> String { pick(chance(nearKeyShare) ? Self.nearKeys : Self.keys) }

    /// A JSON pointer of up to three keys, escaped as RFC 6901 says.
    mutating func pointer() -> String {
        (0..<Int.random(in: 0...3, using: &generator)).map { _ in
            "/" + key().replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
        }.joined()
    }

    /// A decoder whose fields sit at Herald's defaults or at random pointers (now and then text that is no
    /// pointer at all, which names nothing).
    mutating func decoder() -> EventPayloadDecoder {
        var mapping = FieldMapping()
        let fields: [WritableKeyPath<FieldMapping, String?>] = [\.id, \.from, \.to, \.body, \.sentAt, \.chat, \.upTo, \.readAt,
                                                                 \.members, \.state, \.type, \.user]
        for field in fields where chance(0.5) { mapping[keyPath: field] = chance(0.1) ? "m" : pointer() }
        return EventPayloadDecoder(maxPayloadBytes: 1 << 20, mapping: mapping, timeFormat: pick(TimeFormat.allCases))
    }

    /// An object of up to eight members, with values of every kind nested up to four levels.
    mutating func object() -> String {
        var text = "{"
        members(depth: 0, into: &text)
        return text + "}"
    }

    private mutating func members(depth: Int, into text: inout String) {
        for index in 0..<Int.random(in: 0...(depth == 0 ? 8 : 3), using: &generator) {
            if index > 0 { text += "," }
            space(&text)
            string(key(), into: &text)
            space(&text)
            text += ":"
            value(depth: depth + 1, into: &text)
        }
        space(&text)
    }

    private mutating func value(depth: Int, into text: inout String) {
        space(&text)
        if depth < 4, chance(objectShare) {
            text += "{"
            members(depth: depth, into: &text)
            text += "}"
        } else {
            switch Int.random(in: 0..<(depth < 4 ? 8 : 6), using: &generator) {
            case 0, 1, 2: string(pick(Self.texts), into: &text)
            case 3, 4: text += pick(Self.numbers)
            case 5: text += pick(["true", "false", "null", "[]"])
            default:
                text += "["
                for index in 0..<Int.random(in: 1...3, using: &generator) {
                    if index > 0 { text += "," }
                    value(depth: depth + 1, into: &text)
                }
                text += "]"
            }
        }
        space(&text)
    }

    /// A JSON string, some of its characters written as escapes.
    private mutating func string(_ value: String, into text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case _ where scalar.value < 0x10000 && chance(0.15):
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            case "/" where chance(0.5): text += "\\/"
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }

    private mutating func space(_ text: inout String) {
        if chance(0.25) { text += pick([" ", "\n", "\t ", "\r\n"]) }
    }

    /// The payload with one byte taken out, put in or replaced by JSON punctuation, or cut short.
    mutating func damaged(_ payload: [UInt8]) -> [UInt8] {
        var bytes = payload
        let position = Int.random(in: 0..<bytes.count, using: &generator)
        let byte = pick(Array("{}[],:\"\\1e-.x u".utf8))
        switch Int.random(in: 0..<4, using: &generator) {
        case 0: bytes.remove(at: position)
        case 1: bytes.insert(byte, at: position)
        case 2: bytes[position] = byte
        default: bytes.removeSubrange(position...)
        }
        return bytes
    }
}
