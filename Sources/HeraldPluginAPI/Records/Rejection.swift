/// Why an input could not become an event. Stored with the raw bytes in the dead-letter queue.
public struct Rejection: Error, Hashable, Codable, Sendable, CustomStringConvertible {
    /// The category, stable for metrics and filtering.
    public var reason: RejectionReason
    /// A sentence a person can act on, e.g. `field /up_to: expected a string, found a number`.
    public var detail: String

    /// Creates a rejection.
    public init(_ reason: RejectionReason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    /// `reason: detail`.
    public var description: String { "\(reason.rawValue): \(detail)" }
}

/// The categories of bad input.
public enum RejectionReason: String, CaseIterable, Codable, Sendable {
    /// Larger than the configured limit; checked before parsing.
    case oversize
    /// Not valid UTF-8.
    case invalidUTF8 = "invalid_utf8"
    /// Not parseable JSON.
    case malformedJSON = "malformed_json"
    /// A required field is absent.
    case missingField = "missing_field"
    /// A field has the wrong JSON type or an unparseable value.
    case invalidField = "invalid_field"
    /// The payload names an event kind Herald does not know.
    case unknownEventKind = "unknown_event_kind"
    /// The origin (topic) matches no configured subscription.
    case unknownOrigin = "unknown_origin"
    /// The payload names a different user or chat than the access-controlled topic.
    case identityMismatch = "identity_mismatch"
    /// A read receipt from a user who is not among the members that `chat.created` declared for the chat.
    case notAMember = "not_a_member"
    /// An upstream response (an HTTP page) could not be read as the configured shape.
    case unreadableResponse = "unreadable_response"
    /// An output a sink could not deliver (too many attempts, endpoint gone); stored for inspection.
    case undeliverable
}
