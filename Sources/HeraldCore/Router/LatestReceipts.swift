import HeraldPluginAPI

/// Each reader's latest read receipt to each sender in each chat within one commit.
///
/// A receipt tells a sender how far a reader has read a chat, and read positions only move forward. So
/// when several events of one commit send the same sender receipts from the same reader in the same
/// chat, the last one says everything the earlier ones said: the router queues only that one, where it
/// was queued, and leaves the earlier ones out. In a busy chat every message moves its sender's position
/// past the others' messages, so a large commit leaves out many receipts: three quarters of them while
/// the benchmark drains a backlog of direct chats, a third in 5-member groups.
struct LatestReceipts {
    private struct Key: Hashable {
        var recipient: UserID
        var chat: ChatID
        var reader: UserID
    }

    /// The outbox rows of the latest receipt of each key (one per sink that takes receipts).
    private var latestRows: [Key: Range<Int>] = [:]
    /// The outbox rows of receipts a later one replaced.
    private var replacedRows: [Range<Int>] = []
    /// Receipts that a later receipt of the same reader to the same sender in the same chat replaced.
    private(set) var superseded = 0

    /// Creates an empty record with room for `keys` (reader, sender, chat) keys: a large commit's table
    /// would otherwise be hashed anew each time it grows.
    init(reservingCapacity keys: Int = 0) {
        latestRows.reserveCapacity(keys)
    }

    /// Notes that `receipt` was queued as the outbox rows `rows`.
    mutating func keep(_ receipt: ReadReceipt, rows: Range<Int>) {
        guard !rows.isEmpty else { return }
        let key = Key(recipient: receipt.recipient, chat: receipt.chat, reader: receipt.reader)
        if let earlier = latestRows.updateValue(rows, forKey: key) {
            replacedRows.append(earlier)
            superseded += 1
        }
    }

    /// Removes the rows of the receipts a later one replaced from `outbox`, in place (a second array of a
    /// large commit's rows would be held beside the first); the rest keep their order.
    /// - Returns: how many rows it removed.
    func removeReplaced(from outbox: inout [OutboxRow]) -> Int {
        guard !replacedRows.isEmpty else { return 0 }
        var replaced = [Bool](repeating: false, count: outbox.count)
        for rows in replacedRows {
            for index in rows { replaced[index] = true }
        }
        var kept = 0
        // A buffer's swap moves the rows; an array's copies both (a retain and a release of every field).
        outbox.withUnsafeMutableBufferPointer { rows in
            for index in rows.indices where !replaced[index] {
                if kept != index { rows.swapAt(kept, index) }
                kept += 1
            }
        }
        let removed = outbox.count - kept
        outbox.removeLast(removed)
        return removed
    }
}
