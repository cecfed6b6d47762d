public import HeraldPluginAPI

/// Turns one line the plugin wrote (`{"seq":N,"event":{…}}`) into a record, keeping the sequence number
/// for the ack. Events use Herald's payload shape with a `type`; client events (`messages.read`,
/// `chat.opened`, `chat.closed`) name their user in `user`, which Herald accepts because the plugin is
/// a local process the operator configured (it is the authenticated connection).
public struct ExecNormaliser: ReplayNormaliser {
    let adapter: String
    let decoder: EventPayloadDecoder

    /// The record and the plugin's sequence number, if the line had one.
    func normalise(line: [UInt8], origin: String, receivedAt: Timestamp) -> (sequence: Int64?, record: SourceRecord) {
        let provenance = Provenance(adapter: adapter, origin: origin, rawSize: line.count, receivedAt: receivedAt)
        guard case .success(let document) = JSONValue.parse(line), case .object(let members) = document else {
            return (nil, rejected(Rejection(.malformedJSON, "line is not a JSON object"), provenance, line))
        }
        guard case .number(let number)? = members["seq"], number == number.rounded(), number >= 0 else {
            return (nil, rejected(Rejection(.missingField, "line has no whole-number \"seq\""), provenance, line))
        }
        // Found by fuzzing: a whole number past 2⁶³ stopped the gateway when it became an Int64.
        guard number < 9.2e18 else {
            return (nil, rejected(Rejection(.invalidField, "\"seq\" \(number) is out of range"), provenance, line))
        }
        let sequence = Int64(number)
        guard let event = members["event"] else {
            return (sequence, rejected(Rejection(.missingField, "line has no \"event\""), provenance, line))
        }
        switch decoder.decodeFeedEvent(document: event, receivedAt: receivedAt) {
        case .success(let chatEvent): return (sequence, SourceRecord(provenance: provenance, outcome: .event(chatEvent), raw: []))
        case .failure(let rejection): return (sequence, rejected(rejection, provenance, line))
        }
    }

    /// Re-normalises a dead-lettered line.
    public func normalise(_ raw: [UInt8], provenance: Provenance) -> SourceRecord {
        var record = normalise(line: raw, origin: provenance.origin, receivedAt: provenance.receivedAt).record
        record.provenance = provenance
        return record
    }

    private func rejected(_ rejection: Rejection, _ provenance: Provenance, _ line: [UInt8]) -> SourceRecord {
        SourceRecord(provenance: provenance, outcome: .rejected(rejection), raw: line)
    }
}
