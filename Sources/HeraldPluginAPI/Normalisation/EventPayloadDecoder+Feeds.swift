extension EventPayloadDecoder {
    /// Normalises one event from a **trusted backend feed**: a WebSocket stream, a polled REST endpoint
    /// or an exec plugin the operator configured. Such a feed is the authenticated connection, so the
    /// acting user of a client event (`messages.read`, `chat.opened`, `chat.closed`) is taken from the
    /// payload's user field (`mapping.user`, default `/user`) instead of from a topic.
    public func decodeFeedEvent(document: JSONValue, as kind: PayloadKind = .fromPayload,
                                receivedAt: Timestamp) -> Result<ChatEvent, Rejection> {
        var bindings = PayloadBindings()
        if case .string(let user)? = document.value(at: pointers[.user]) {
            // The feed's user is an identifier like any other and gets the same checks.
            do throws(Rejection) {
                try PayloadReader.checkIdentifier(user, field: "user", pointer: pointers[.user].text)
            } catch {
                return .failure(error)
            }
            bindings.user = UserID(user)
        }
        return decode(document: document, as: kind, bindings: bindings, receivedAt: receivedAt)
    }
}
