/// A ``FieldMapping`` with Herald's defaults filled in and every pointer parsed once, for the decoder's
/// per-payload lookups.
struct FieldPointers: Sendable {
    let id: JSONPointer
    let from: JSONPointer
    let to: JSONPointer
    let body: JSONPointer
    let sentAt: JSONPointer
    let chat: JSONPointer
    let upTo: JSONPointer
    let readAt: JSONPointer
    let members: JSONPointer
    let state: JSONPointer
    let type: JSONPointer
    let user: JSONPointer

    init(_ mapping: FieldMapping) {
        id = JSONPointer(mapping.id ?? "/id")
        from = JSONPointer(mapping.from ?? "/from")
        to = JSONPointer(mapping.to ?? "/to")
        body = JSONPointer(mapping.body ?? "/body")
        sentAt = JSONPointer(mapping.sentAt ?? "/sent_at")
        chat = JSONPointer(mapping.chat ?? "/chat")
        upTo = JSONPointer(mapping.upTo ?? "/up_to")
        readAt = JSONPointer(mapping.readAt ?? "/read_at")
        members = JSONPointer(mapping.members ?? "/members")
        state = JSONPointer(mapping.state ?? "/state")
        type = JSONPointer(mapping.type ?? "/type")
        user = JSONPointer(mapping.user ?? "/user")
    }
}
