import HeraldPluginAPI

/// The stored-message ranges of one (chat, user), as consecutive intervals from the user's stored read
/// position up: answers "how many stored messages after K" and "who sent stored messages in (A, B]"
/// for any K, A, B the batch plan listed (see ``BatchPlan``).
struct StoredRanges {
    /// Intervals sorted by lower bound; they chain: each one's `through` is the next one's `after`.
    private var intervals: [(after: MessageKey?, through: MessageKey?, summary: StoredRangeSummary)] = []

    /// Groups a slice's ranges by chat and user.
    static func group(_ ranges: [StoredRange: StoredRangeSummary]) -> [ChatUser: StoredRanges] {
        var grouped: [ChatUser: StoredRanges] = [:]
        grouped.reserveCapacity(ranges.count)
        for (range, summary) in ranges {
            grouped[ChatUser(chat: range.chat, user: range.user), default: StoredRanges()].intervals
                .append((range.after, range.through, summary))
        }
        for key in grouped.keys {
            grouped[key]?.intervals.sort { lower($0.after, than: $1.after) }
        }
        return grouped
    }

    /// Stored messages after `key`, not the user's own. `newest` is the chat's newest stored message.
    func count(after key: MessageKey?, newest: MessageKey?) throws(StateSliceError) -> Int {
        guard let newest, key.map({ $0 < newest }) ?? true else { return 0 }
        guard let start = intervals.firstIndex(where: { $0.after == key }) else {
            throw StateSliceError("no stored range starts at \(String(describing: key))")
        }
        return intervals[start...].reduce(0) { $0 + $1.summary.count }
    }

    /// Adds to `senders` the senders other than the user of stored messages in `(after, through]`.
    func addSenders(after: MessageKey?, through: MessageKey, newest: MessageKey?, to senders: inout DistinctUsers) throws(StateSliceError) {
        guard let newest, after.map({ $0 < newest }) ?? true else { return }
        guard var index = intervals.firstIndex(where: { $0.after == after }) else {
            throw StateSliceError("no stored range starts at \(String(describing: after))")
        }
        while index < intervals.count {
            let interval = intervals[index]
            guard let upper = interval.through, upper <= through else { break }
            senders.formUnion(interval.summary.senders)
            index += 1
        }
    }

    /// `nil` is the lowest bound.
    private static func lower(_ lhs: MessageKey?, than rhs: MessageKey?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): false
        case (nil, _): true
        case (_, nil): false
        case (let lhs?, let rhs?): lhs < rhs
        }
    }
}

/// A (chat, user) pair as a dictionary key.
struct ChatUser: Hashable {
    var chat: ChatID
    var user: UserID
}
