import HeraldPluginAPI

/// The records of the burst being read; touched only on the loop thread.
///
/// Each burst's array is reserved for as many records as the burst before it held, up to the burst limit
/// (and at least ``minimumReservation``): a backlog's full bursts are read into arrays that never grow, while
/// a steady trickle of one or two records a burst does not allocate (and, past glibc's mmap threshold, map and
/// unmap) room for a full burst each time. A burst larger than its reservation grows its array by doubling.
final class BatchBuffer: @unchecked Sendable {
    /// The fewest records a burst's array is reserved for.
    static let minimumReservation = 16

    /// The records read so far in this burst.
    var records: [SourceRecord] = []
    private let capacity: Int

    /// Creates an empty buffer for bursts of at most `capacity` records; the first burst is reserved in full.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
        records.reserveCapacity(self.capacity)
    }

    /// Hands over the records read so far and starts an empty burst, reserved for the size of this one.
    func take() -> [SourceRecord] {
        var taken: [SourceRecord] = []
        taken.reserveCapacity(Self.reservation(after: records.count, limit: capacity))
        swap(&taken, &records)
        return taken
    }

    /// The reservation for the burst after one of `count` records, with bursts of at most `limit`.
    static func reservation(after count: Int, limit: Int) -> Int {
        min(limit, max(minimumReservation, count))
    }
}
