import HeraldPluginAPI

/// When a small burst waits before it commits.
///
/// Every commit costs a fixed amount on top of its messages: a transaction, the pages it touches written
/// to the write-ahead log, an fsync. Under a backlog the bursts are large and that cost is shared; under a
/// steady load each message would otherwise commit as soon as the previous commit ends, in bursts of a
/// few, and the fixed cost per commit becomes most of the cost per message. So while messages keep
/// coming (the last burst held more than one), a small burst waits until `interval` has passed since
/// the last commit began; more messages join it meanwhile. A message after a quiet moment (the last
/// burst held one) commits at once, so light traffic never waits. PostgreSQL's `commit_delay` with
/// `commit_siblings` makes the same trade.
struct CommitPacing: Sendable {
    /// The shortest time between the starts of two commits while messages keep coming; zero turns pacing off.
    let interval: Duration
    /// Bursts of this many messages or more never wait.
    let handover: Int
    /// A burst of at least this many messages means messages keep coming.
    static let steadyBurst = 2
    private var lastStart: ContinuousClock.Instant?
    private var lastBurst = 0

    init(interval: Duration, handover: Int) {
        self.interval = interval
        self.handover = handover
    }

    /// How long a burst of `gathered` messages waits before it commits; zero commits now.
    func delay(gathered: Int, now: ContinuousClock.Instant) -> Duration {
        guard interval > .zero, gathered > 0, gathered < handover, lastBurst >= Self.steadyBurst, let lastStart else { return .zero }
        return max(.zero, lastStart + interval - now)
    }

    /// Records that a commit of `burst` messages began at `now`.
    mutating func started(burst: Int, at now: ContinuousClock.Instant) {
        lastStart = now
        lastBurst = burst
    }
}

extension Duration {
    /// Whole milliseconds, rounded up, at most a minute: a `poll` timeout that does not wake early.
    var pollMilliseconds: Int32 {
        guard self > .zero else { return 0 }
        return Int32(min((nanoseconds + 999_999) / 1_000_000, 60_000))
    }
}
