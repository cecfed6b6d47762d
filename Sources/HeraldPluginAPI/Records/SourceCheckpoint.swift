/// A source's position in its upstream (the last event id of a stream, a page cursor, an ETag), stored
/// **in the same transaction** as the events it produced, so a restart resumes exactly where the store
/// is: nothing skipped, nothing applied twice.
public struct SourceCheckpoint: Sendable, Hashable {
    /// The source instance name (checkpoints of different sources never mix).
    public var source: String
    /// What the value is, within the source: `last_event_id`, `endpoint/messages/cursor`, ….
    public var key: String
    /// The position; `nil` removes the stored value.
    public var value: String?

    /// Creates a checkpoint.
    public init(source: String, key: String, value: String?) {
        self.source = source
        self.key = key
        self.value = value
    }
}
