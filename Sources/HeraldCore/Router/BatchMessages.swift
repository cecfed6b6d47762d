import HeraldPluginAPI

/// The messages one batch has stored so far in one chat, kept in chat order so that the counts and
/// sender sets an unread recount or a read receipt needs are a binary search and a short walk.
struct BatchMessages {
    private var keys: [MessageKey] = []
    private var senders: [UserID] = []

    /// Adds a message (messages mostly arrive in order, so this is mostly an append).
    mutating func insert(_ key: MessageKey, sender: UserID) {
        let index = firstIndex(after: key)
        keys.insert(key, at: index)
        senders.insert(sender, at: index)
    }

    /// The newest message's key.
    var last: MessageKey? { keys.last }

    /// Messages after `key` (`nil`: all) not sent by `user`.
    func count(after key: MessageKey?, excluding user: UserID) -> Int {
        var count = 0
        for index in firstIndex(after: key)..<keys.count where senders[index] != user { count += 1 }
        return count
    }

    /// Adds to `result` the senders other than `user` of the messages in `(after, through]`.
    func addSenders(after: MessageKey?, through: MessageKey, excluding user: UserID, to result: inout DistinctUsers) {
        var index = firstIndex(after: after)
        while index < keys.count, keys[index] <= through {
            if senders[index] != user { result.insert(senders[index]) }
            index += 1
        }
    }

    /// The first position whose key is after `key` (0 for `nil`).
    private func firstIndex(after key: MessageKey?) -> Int {
        guard let key else { return 0 }
        if let last = keys.last, last <= key { return keys.count }
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] <= key { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
