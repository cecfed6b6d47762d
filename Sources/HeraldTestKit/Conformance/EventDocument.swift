import Foundation
import HeraldPluginAPI

/// Events as plain JSON objects in Herald's payload shape with a `type` — the form conformance
/// fixtures write their expectations in (`expected-events.json`).
public enum EventDocument {
    /// The event as a JSON-compatible dictionary: its self-describing form (``EventWireFormat``) without a
    /// read's `read_at`, which defaults to when the input arrived.
    public static func object(_ event: ChatEvent) -> [String: Any] {
        var object = (try? JSONSerialization.jsonObject(with: Data(EventWireFormat.encode(event)))) as? [String: Any] ?? [:]
        object["read_at"] = nil
        return object
    }

    /// Canonical JSON text (sorted keys) for comparing.
    public static func canonical(_ object: Any) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
