/// Events in Herald's self-describing JSON form, the one HTTP posts, exec plugins, WebSocket streams and
/// `event: auto` subscriptions send:
///
///     {"type":"messages.read","chat":"c1","user":"bob","up_to":"m1","read_at":1763800005000}
///
/// Sources keep no bytes of inputs they accept, so an event the router refuses is dead-lettered in this
/// form; a source that reads the self-describing form (or the topic layout's fields) decodes it again.
public enum EventWireFormat {
    /// The event as one compact JSON object: `type` and `chat` first, then the event's own fields.
    public static func encode(_ event: ChatEvent) -> [UInt8] {
        EventDocument(event: event).encoded
    }
}

/// An event's fields: `type` and `chat` first, then the event's own.
private struct EventDocument: JSONObjectDocument {
    let event: ChatEvent

    func fields<Fields: JSONFields>(into writer: inout Fields) {
        writer.field("type", event.kind.rawValue)
        writer.field("chat", event.chat.rawValue)
        switch event {
        case .messageReceived(let message):
            writer.field("id", message.id.rawValue)
            writer.field("from", message.sender.rawValue)
            if let recipients = message.recipients { writer.field("to", recipients.map(\.rawValue)) }
            writer.field("body", message.body)
            writer.field("sent_at", message.sentAt.milliseconds)
        case .messagesRead(let read):
            writer.field("user", read.reader.rawValue)
            writer.field("up_to", read.upTo.rawValue)
            writer.field("read_at", read.readAt.milliseconds)
        case .chatCreated(let created):
            writer.field("members", created.members.map(\.rawValue))
        case .chatOpened(let focus), .chatClosed(let focus):
            writer.field("user", focus.user.rawValue)
        }
    }
}
