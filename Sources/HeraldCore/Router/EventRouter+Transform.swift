import HeraldPluginAPI
import Synchronization

extension EventRouter {
    /// The pure part of a commit: applies `records` to `slice` in memory (``BatchApplier``) and builds what
    /// the transaction writes (the delta, its outbox rows, dead letters and checkpoints) and what the router
    /// reports after it. No I/O: it may run on another thread than the transaction's
    /// (``MessagesAhead/written``).
    func transform(_ records: [SourceRecord], slice: StateSlice, now: Timestamp, messages: Int,
                   checkpoints: [SourceCheckpoint], tapping: Bool) throws -> (AppliedBatch, StoreDelta) {
        var applier = BatchApplier(slice: slice, policy: policy, now: now, messages: messages)
        var batch = AppliedBatch()
        batch.report.outcomes.reserveCapacity(records.count)
        var outbox: [OutboxRow] = []
        let reserving = records.count >= Self.reservingBatch
        if reserving {
            let expectedRows = records.count * outboxRowsPerThousandRecords.load(ordering: .relaxed) / 1000
            outbox.reserveCapacity(expectedRows + expectedRows / 16)
        }
        // A badge goes to a loaded user, and most receipts of a large commit have a reader and a chat of
        // their own: the slice's users size both tables.
        let users = reserving ? slice.unread.count : 0
        var badges = LatestBadges(reservingCapacity: users)
        var receipts = LatestReceipts(reservingCapacity: users)
        // Inputs a source rejected and events the model refused go the same way.
        func deadLetter(_ rejection: Rejection, _ record: SourceRecord, raw: [UInt8]) {
            batch.deadLetters.append(NewDeadLetter(rejection: rejection, provenance: record.provenance, raw: raw))
            batch.report.deadLettered += 1
            batch.report.outcomes.append(.deadLettered)
        }
        // Records are read in place by index: bound by `for … in`, each would be copied, every string in it
        // retained and released again.
        for index in records.indices {
            let queuedAt = records[index].provenance.receivedAt
            switch records[index].outcome {
            case .event(let event):
                let effect = try applier.apply(event)
                if let rejection = effect.rejection {
                    // Sources drop the bytes of inputs they accept; the event's self-describing form stands in.
                    let record = records[index]
                    deadLetter(rejection, record, raw: record.raw.isEmpty ? EventWireFormat.encode(event) : record.raw)
                    continue
                }
                effect.applied ? (batch.report.applied += 1) : (batch.report.duplicates += 1)
                batch.report.outcomes.append(effect.applied ? .applied : .duplicate)
                for output in effect.outputs {
                    let first = outbox.count
                    enqueue(output, at: queuedAt, into: &outbox)
                    // Read from its row, which took it: a receipt queued for no sink has none.
                    if first < outbox.count, case .readReceipt(let receipt) = outbox[first].output {
                        receipts.keep(receipt, rows: first..<outbox.count)
                    }
                }
                for user in effect.badgeUsers { badges.keep(user, queuedAt: queuedAt) }
                if tapping {
                    let badgeOutputs = effect.badgeUsers.map { Output.badge(applier.model.badge(for: $0)) }
                    batch.tapped.append(TailRecord(event: event, provenance: records[index].provenance, committedAt: queuedAt,
                                                   commitLatencyMilliseconds: 0, applied: effect.applied,
                                                   outputs: effect.outputs + badgeOutputs))
                }
            case .rejected(let rejection):
                deadLetter(rejection, records[index], raw: records[index].raw)
            }
        }
        let replacedRows = receipts.removeReplaced(from: &outbox)
        for (user, queuedAt) in badges.latest { enqueue(.badge(applier.model.badge(for: user)), at: queuedAt, into: &outbox) }
        batch.badgesSuperseded = badges.superseded
        batch.receiptsSuperseded = receipts.superseded
        batch.report.outputs = outbox.count
        // The next large batch reserves room for every row it queues, the receipts it removes again included.
        if reserving { outboxRowsPerThousandRecords.store((outbox.count + replacedRows) * 1000 / records.count, ordering: .relaxed) }

        var delta = applier.model.delta()
        delta.outbox = outbox
        delta.deadLetters = batch.deadLetters
        delta.checkpoints = checkpoints
        delta.checkpointTime = clock.now()
        return (batch, delta)
    }
}
