public import HeraldPluginAPI

/// Turns one WebSocket message into a record, and reads its event id for resuming. Pure, so it is
/// unit-tested and replays dead letters exactly as the live source would.
public struct WebSocketNormaliser: ReplayNormaliser {
    let adapter: String
    let origin: String
    let kind: PayloadKind
    let decoder: EventPayloadDecoder
    /// Where the event id is, parsed once (it is read from every message).
    private let idPointer: JSONPointer?
    /// What marks an application pong, its pointer parsed once.
    private let pong: (pointer: JSONPointer, value: String)?

    init(adapter: String, origin: String, kind: PayloadKind, idPointer: String?, appPong: AppPingOptions.PongMatch?,
         decoder: EventPayloadDecoder) {
        self.adapter = adapter
        self.origin = origin
        self.kind = kind
        self.idPointer = idPointer.map(JSONPointer.init)
        self.pong = appPong.map { (JSONPointer($0.pointer), $0.value) }
        self.decoder = decoder
    }

    /// What one message is.
    enum Reading {
        /// An event or a rejection, with the message's event id if it has one.
        case record(SourceRecord, eventID: String?)
        /// An application-level pong: liveness only.
        case pong
    }

    /// Reads a complete message (`text` says whether it came in text frames).
    func read(_ bytes: [UInt8], text: Bool, receivedAt: Timestamp) -> Reading {
        let provenance = Provenance(adapter: adapter, origin: origin, rawSize: bytes.count, receivedAt: receivedAt)
        func rejected(_ rejection: Rejection) -> Reading {
            .record(SourceRecord(provenance: provenance, outcome: .rejected(rejection), raw: bytes), eventID: nil)
        }
        guard bytes.count <= decoder.maxPayloadBytes else {
            return rejected(Rejection(.oversize, "message is \(bytes.count) bytes, the limit is \(decoder.maxPayloadBytes)"))
        }
        guard String(validating: bytes, as: UTF8.self) != nil else {
            return rejected(Rejection(.invalidUTF8, text ? "text frame is not valid UTF-8" : "message is not valid UTF-8"))
        }
        let document: JSONValue
        switch JSONValue.parse(bytes) {
        case .success(let value): document = value
        case .failure(let error): return rejected(Rejection(.malformedJSON, "message is not valid JSON: \(error.message) at byte \(error.offset)"))
        }
        if let pong, document.value(at: pong.pointer) == .string(pong.value) { return .pong }
        let eventID: String? = switch idPointer.flatMap({ document.value(at: $0) }) {
        case .string(let value)?: value
        case .number(let value)? where value == value.rounded(): String(Int64(value))
        default: nil
        }
        switch decoder.decodeFeedEvent(document: document, as: kind, receivedAt: receivedAt) {
        case .success(let event):
            return .record(SourceRecord(provenance: provenance, outcome: .event(event), raw: []), eventID: eventID)
        case .failure(let rejection):
            return .record(SourceRecord(provenance: provenance, outcome: .rejected(rejection), raw: bytes), eventID: eventID)
        }
    }

    /// Re-normalises a dead-lettered message.
    public func normalise(_ raw: [UInt8], provenance: Provenance) -> SourceRecord {
        guard case .record(var record, _) = read(raw, text: true, receivedAt: provenance.receivedAt) else {
            return SourceRecord(provenance: provenance, outcome: .rejected(Rejection(.unknownEventKind, "an application pong")), raw: raw)
        }
        record.provenance = provenance
        return record
    }
}
