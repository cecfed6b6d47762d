import Foundation
public import HeraldPluginAPI

/// Turns a request body into one record per event: a JSON object (one event), a JSON array (a batch)
/// or NDJSON (one event per line, chosen by the `Content-Type`). Pure, so it is unit-tested, and it
/// replays dead letters exactly as the live source reads them: a dead-lettered item is one event's bytes.
///
/// The HTTP source is an authenticated connection of a trusted backend, so the acting user of a client
/// event comes from the event's user field (`mapping.user`, default `/user`), as for other backend feeds.
public struct HTTPBodyReader: ReplayNormaliser {
    let adapter: String
    let kind: PayloadKind
    let maxEvents: Int
    let decoder: EventPayloadDecoder

    /// How a body is framed.
    public enum Framing: Sendable, Hashable {
        /// One JSON document: an object or an array of objects.
        case json
        /// One JSON document per line.
        case ndjson

        /// The framing a `Content-Type` names; `nil` for a type this source does not read.
        public init?(contentType: String?) {
            let mediaType = (contentType ?? "application/json").split(separator: ";").first?
                .trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            switch mediaType {
            case "application/json", "text/json", "": self = .json
            case "application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines": self = .ndjson
            default: return nil
            }
        }
    }

    /// A body that is refused as a whole, with the HTTP status and one line saying why.
    public struct Refusal: Error, Sendable, Hashable {
        /// 400 (not JSON), 413 (too many events) or 415 (a content type not read).
        public var status: Int
        /// One line for the client.
        public var message: String
    }

    /// The records of `body`, in order, or why the whole body is refused.
    public func read(_ body: [UInt8], framing: Framing, origin: String, receivedAt: Timestamp) -> Result<[SourceRecord], Refusal> {
        func provenance(_ size: Int) -> Provenance { Provenance(adapter: adapter, origin: origin, rawSize: size, receivedAt: receivedAt) }
        switch framing {
        case .ndjson:
            var lines: [ArraySlice<UInt8>] = []
            var start = body.startIndex
            for index in body.indices where body[index] == UInt8(ascii: "\n") {
                lines.append(body[start..<index])
                start = index + 1
            }
            lines.append(body[start...])
            let items = lines.map { line in line.last == UInt8(ascii: "\r") ? line.dropLast() : line }
                .filter { !$0.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") } }
            guard items.count <= maxEvents else { return .failure(tooMany(items.count)) }
            guard !items.isEmpty else { return .failure(Refusal(status: 400, message: "the body holds no events")) }
            return .success(items.map { normalise(Array($0), provenance: provenance($0.count)) })
        case .json:
            guard String(validating: body, as: UTF8.self) != nil else {
                return .failure(Refusal(status: 400, message: "the body is not valid UTF-8"))
            }
            let document: JSONValue
            switch JSONValue.parse(body) {
            case .success(let value): document = value
            case .failure(let error):
                return .failure(Refusal(status: 400, message: "the body is not JSON: \(error.message) at byte \(error.offset)"))
            }
            switch document {
            case .object:
                return .success([record(document, raw: body, provenance: provenance(body.count))])
            case .array(let elements):
                guard elements.count <= maxEvents else { return .failure(tooMany(elements.count)) }
                guard !elements.isEmpty else { return .failure(Refusal(status: 400, message: "the body holds no events")) }
                return .success(elements.map { element in
                    let raw = element.jsonBytes
                    return record(element, raw: raw, provenance: provenance(raw.count))
                })
            default:
                return .failure(Refusal(status: 400, message: "the body must be an event object or an array of them, found \(document.typeName)"))
            }
        }
    }

    /// One event's bytes (an NDJSON line, or a dead letter being replayed).
    public func normalise(_ raw: [UInt8], provenance: Provenance) -> SourceRecord {
        guard raw.count <= decoder.maxPayloadBytes else {
            return SourceRecord(provenance: provenance, outcome: .rejected(Rejection(
                .oversize, "event is \(raw.count) bytes, the limit is \(decoder.maxPayloadBytes)")), raw: raw)
        }
        guard String(validating: raw, as: UTF8.self) != nil else {
            return SourceRecord(provenance: provenance, outcome: .rejected(Rejection(.invalidUTF8, "event is not valid UTF-8")), raw: raw)
        }
        switch JSONValue.parse(raw) {
        case .success(let document): return record(document, raw: raw, provenance: provenance)
        case .failure(let error):
            return SourceRecord(provenance: provenance, outcome: .rejected(Rejection(
                .malformedJSON, "event is not valid JSON: \(error.message) at byte \(error.offset)")), raw: raw)
        }
    }

    private func record(_ document: JSONValue, raw: [UInt8], provenance: Provenance) -> SourceRecord {
        guard raw.count <= decoder.maxPayloadBytes else {
            return SourceRecord(provenance: provenance, outcome: .rejected(Rejection(
                .oversize, "event is \(raw.count) bytes, the limit is \(decoder.maxPayloadBytes)")), raw: raw)
        }
        switch decoder.decodeFeedEvent(document: document, as: kind, receivedAt: provenance.receivedAt) {
        case .success(let event): return SourceRecord(provenance: provenance, outcome: .event(event), raw: [])
        case .failure(let rejection): return SourceRecord(provenance: provenance, outcome: .rejected(rejection), raw: raw)
        }
    }

    private func tooMany(_ count: Int) -> Refusal {
        Refusal(status: 413, message: "the body holds \(count) events; the limit is \(maxEvents) per request (max_events_per_request)")
    }
}
