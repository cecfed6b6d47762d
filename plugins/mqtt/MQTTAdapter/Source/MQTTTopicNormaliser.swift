public import HeraldPluginAPI
import Mosquitto

/// Turns an MQTT message (topic + payload) into a ``SourceRecord``: the first subscription whose
/// template matches decides the event kind; `{chat}` and `{user}` from the topic bind the chat and
/// the acting user. Pure, so the dead-letter replay uses exactly the live logic.
public struct MQTTTopicNormaliser: ReplayNormaliser {
    struct Route: Sendable {
        var template: TopicTemplate
        var kind: PayloadKind
        var decoder: EventPayloadDecoder
    }

    let adapter: String
    let routes: [Route]
    let maxPayloadBytes: Int

    /// The subscription filters to subscribe to.
    var filters: [String] {
        var seen: Set<String> = []
        return routes.map(\.template.filter).filter { seen.insert($0).inserted }
    }

    /// Normalises one inbound message; `attributes` (MQTT 5 properties) travel in its provenance only.
    public func normalise(topic: String, payload: [UInt8], receivedAt: Timestamp, attributes: [String: String] = [:]) -> SourceRecord {
        normalise(payload, provenance: Provenance(adapter: adapter, origin: topic, rawSize: payload.count, receivedAt: receivedAt,
                                                  attributes: attributes))
    }

    /// The provenance attributes of an MQTT 5 message: `content_type` and `user_property.NAME` (a name
    /// that repeats keeps its values joined by commas).
    static func attributes(of message: MosquittoMessage) -> [String: String] {
        guard message.contentType != nil || !message.userProperties.isEmpty else { return [:] }
        var attributes: [String: String] = [:]
        if let contentType = message.contentType { attributes["content_type"] = contentType }
        for property in message.userProperties {
            let key = "user_property.\(property.name)"
            attributes[key] = attributes[key].map { "\($0),\(property.value)" } ?? property.value
        }
        return attributes
    }

    /// Normalises a raw input with its provenance (the origin is the topic).
    public func normalise(_ raw: [UInt8], provenance: Provenance) -> SourceRecord {
        let outcome: SourceRecord.Outcome
        if raw.count > maxPayloadBytes {
            outcome = .rejected(Rejection(.oversize, "payload is \(raw.count) bytes, the limit is \(maxPayloadBytes)"))
        } else if let (route, captures) = route(for: provenance.origin) {
            let bindings = PayloadBindings(chat: captures["chat"].map { ChatID($0) }, user: captures["user"].map { UserID($0) })
            switch route.decoder.decode(raw, as: route.kind, bindings: bindings, receivedAt: provenance.receivedAt) {
            case .success(let event): outcome = .event(event)
            case .failure(let rejection): outcome = .rejected(rejection)
            }
        } else {
            outcome = .rejected(Rejection(.unknownOrigin, "topic \(provenance.origin) matches no subscription"))
        }
        if case .event = outcome {
            return SourceRecord(provenance: provenance, outcome: outcome, raw: [])
        }
        return SourceRecord(provenance: provenance, outcome: outcome, raw: raw)
    }

    private func route(for topic: String) -> (Route, [String: String])? {
        for route in routes {
            if let captures = route.template.match(topic) { return (route, captures) }
        }
        return nil
    }
}
