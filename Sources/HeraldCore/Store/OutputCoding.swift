import Foundation
import HeraldPluginAPI

/// Encodes outputs for the outbox (the inner value as JSON; the kind is stored beside it) and back.
enum OutputCoding {
    static func encode(_ output: Output) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        switch output {
        case .notification(let value): return try encoder.encode(value)
        case .liveMessage(let value): return try encoder.encode(value)
        case .readReceipt(let value): return try encoder.encode(value)
        case .badge(let value): return try encoder.encode(value)
        }
    }

    static func decode(kind: String, payload: Data) throws -> Output {
        let decoder = JSONDecoder()
        switch OutputKind(rawValue: kind) {
        case .notification?: return .notification(try decoder.decode(InAppNotification.self, from: payload))
        case .liveMessage?: return .liveMessage(try decoder.decode(LiveMessage.self, from: payload))
        case .readReceipt?: return .readReceipt(try decoder.decode(ReadReceipt.self, from: payload))
        case .badge?: return .badge(try decoder.decode(BadgeUpdate.self, from: payload))
        case nil: throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "unknown output kind \(kind)"))
        }
    }
}
