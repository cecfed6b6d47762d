import Foundation
import HeraldPluginAPI

/// Events as plain JSON objects in Herald's payload shape with a `type` — the form conformance
/// fixtures write their expectations in (`expected-events.json`).
public enum EventDocument {
    /// The event as a JSON-compatible dictionary.
    public static func object(_ event: ChatEvent) -> [String: Any] {
        var object: [String: Any] = ["type": event.kind.rawValue, "chat": event.chat.rawValue]
        switch event {
        case .messageReceived(let message):
            object["id"] = message.id.rawValue
            object["from"] = message.sender.rawValue
            object["body"] = message.body
            object["sent_at"] = message.sentAt.milliseconds
            if let recipients = message.recipients { object["to"] = recipients.map(\.rawValue) }
        case .messagesRead(let read):
            object["user"] = read.reader.rawValue
            object["up_to"] = read.upTo.rawValue
        case .chatCreated(let created):
            object["members"] = created.members.map(\.rawValue)
        case .chatOpened(let focus), .chatClosed(let focus):
            object["user"] = focus.user.rawValue
        }
        return object
    }

    /// Canonical JSON text (sorted keys) for comparing.
    public static func canonical(_ object: Any) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
