import Synchronization

/// Decides whether a repeated log line may be written: at most once per interval per key, reporting
/// how many were suppressed in between. Keeps a flood of bad input from flooding the log; the router,
/// the outbox and adapters share it.
public final class RateLimitedLog: Sendable {
    private let intervalMilliseconds: Int64
    private let state = Mutex<[String: (last: Timestamp, suppressed: Int)]>([:])

    /// Admits a line per key at most every `intervalMilliseconds`.
    public init(intervalMilliseconds: Int64) { self.intervalMilliseconds = intervalMilliseconds }

    /// - Returns: the number suppressed since the last admitted line, or `nil` to stay quiet.
    public func admit(key: String, now: Timestamp) -> Int? {
        state.withLock { table in
            if let entry = table[key], now.milliseconds - entry.last.milliseconds < intervalMilliseconds {
                table[key] = (entry.last, entry.suppressed + 1)
                return nil
            }
            let suppressed = table[key]?.suppressed ?? 0
            table[key] = (now, 0)
            return suppressed
        }
    }
}
