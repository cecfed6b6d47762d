/// A payload field the decoder reads.
enum PayloadField: Int, CaseIterable, Sendable {
    case id, from, to, body, sentAt, chat, upTo, readAt, members, state, type, user

    /// The field's name, as messages and the configuration's `mapping` keys spell it.
    var name: String {
        switch self {
        case .id: "id"
        case .from: "from"
        case .to: "to"
        case .body: "body"
        case .sentAt: "sent_at"
        case .chat: "chat"
        case .upTo: "up_to"
        case .readAt: "read_at"
        case .members: "members"
        case .state: "state"
        case .type: "type"
        case .user: "user"
        }
    }

    /// The pointer `mapping` sets for this field, if any.
    func configured(in mapping: FieldMapping) -> String? {
        switch self {
        case .id: mapping.id
        case .from: mapping.from
        case .to: mapping.to
        case .body: mapping.body
        case .sentAt: mapping.sentAt
        case .chat: mapping.chat
        case .upTo: mapping.upTo
        case .readAt: mapping.readAt
        case .members: mapping.members
        case .state: mapping.state
        case .type: mapping.type
        case .user: mapping.user
        }
    }
}

/// A ``FieldMapping`` with Herald's defaults filled in (`/` and the field's name) and every pointer
/// parsed once, for the decoder's per-payload lookups; and the same pointers as a ``PointerTree``, so a
/// payload is read in one pass that keeps only the values they name.
struct FieldPointers: Sendable {
    /// One pointer per field, in ``PayloadField`` order.
    private let pointers: [JSONPointer]
    /// The pointers merged by their common prefixes; a field's slot is its `rawValue`.
    let tree: PointerTree

    init(_ mapping: FieldMapping) {
        pointers = PayloadField.allCases.map { JSONPointer($0.configured(in: mapping) ?? "/\($0.name)") }
        tree = PointerTree(pointers)
    }

    /// The pointer of `field`.
    subscript(field: PayloadField) -> JSONPointer { pointers[field.rawValue] }
}
