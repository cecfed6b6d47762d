/// The wait for a committed batch to become durable, from
/// ``IngestHandle/commitDeferringDurability(_:checkpoints:)``.
///
/// A store may let a commit return once its transaction is committed and make it durable (the `fsync`)
/// afterwards, outside the store's writer: the next batch's transaction then runs while the last one is
/// synced. A source that takes this path acknowledges the batch upstream only after ``wait()`` returns.
public struct CommitDurability: Sendable {
    private let body: @Sendable () throws -> Void

    /// A wait that runs `body`, which returns once the commit is durable or throws why it cannot be.
    public init(_ body: @escaping @Sendable () throws -> Void) { self.body = body }

    /// A commit that was durable when it returned.
    public static let durable = CommitDurability {}

    /// Returns once the commit is durable.
    /// - Throws: ``IngestError`` if it cannot be made durable: acknowledge nothing of the batch; the
    ///   upstream must deliver it again.
    public func wait() throws(IngestError) {
        do {
            try body()
        } catch let error as IngestError {
            throw error
        } catch {
            throw IngestError("the commit could not be made durable: \(error)")
        }
    }
}
