public import HeraldPluginAPI

/// Re-runs dead-lettered inputs through their adapter's current normaliser (after a config fix).
/// Inputs that now normalise are committed through the router and marked replayed; the others stay.
/// Replaying twice is harmless: events are idempotent and replayed rows are skipped.
public struct DeadLetterReplayer: Sendable {
    /// What a replay did.
    public struct Summary: Sendable, Hashable {
        /// Rows that became events and were applied.
        public var replayed = 0
        /// Rows that still fail, with the new reason.
        public var stillFailing: [(id: Int64, rejection: Rejection)] = []
        /// Rows whose adapter is not in the config.
        public var unknownAdapter = 0

        /// Equality by counts and ids.
        public static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.replayed == rhs.replayed && lhs.unknownAdapter == rhs.unknownAdapter
                && lhs.stillFailing.map(\.id) == rhs.stillFailing.map(\.id)
        }

        /// Hashes the counts.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(replayed)
            hasher.combine(unknownAdapter)
        }
    }

    let store: any ChatStore
    let router: EventRouter
    let normalisers: [String: any ReplayNormaliser]
    let clock: any WallClock

    /// Creates a replayer; `normalisers` maps source names to their normalisers.
    public init(store: any ChatStore, router: EventRouter, normalisers: [String: any ReplayNormaliser], clock: any WallClock) {
        self.store = store
        self.router = router
        self.normalisers = normalisers
        self.clock = clock
    }

    /// How many rows pass between two progress reports.
    public static let progressInterval = 500

    /// Replays up to `limit` rows, optionally only those of one adapter. `progress` hears how many of
    /// the selected rows are done, every ``progressInterval`` rows and once at the end.
    public func replay(limit: Int, adapter: String? = nil,
                       progress: (_ done: Int, _ total: Int) -> Void = { _, _ in }) throws -> Summary {
        var summary = Summary()
        let letters = try store.deadLetters(limit: limit, includeReplayed: false)
            .filter { adapter == nil || $0.provenance.adapter == adapter }
        defer { progress(letters.count, letters.count) }
        for (index, letter) in letters.enumerated() {
            if index > 0, index % Self.progressInterval == 0 { progress(index, letters.count) }
            guard let normaliser = normalisers[letter.provenance.adapter] else {
                summary.unknownAdapter += 1
                continue
            }
            let record = normaliser.normalise(letter.raw, provenance: letter.provenance)
            switch record.outcome {
            case .event:
                let report = try router.commit([record])
                try store.markReplayed(deadLetter: letter.id, at: clock.now())
                if report.deadLettered > 0 {
                    // The router refused the event again (a read from someone still not a member) and
                    // dead-lettered it anew; that letter takes this one's place.
                    summary.stillFailing.append((letter.id, letter.rejection))
                } else {
                    summary.replayed += 1
                }
            case .rejected(let rejection):
                summary.stillFailing.append((letter.id, rejection))
            }
        }
        return summary
    }
}
