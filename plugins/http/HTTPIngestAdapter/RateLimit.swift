import HeraldPluginAPI
import Synchronization

extension Duration {
    /// Nanoseconds, clamped to `Int64`.
    var nanosecondsClamped: Int64 {
        let (seconds, attoseconds) = components
        return seconds > Int64.max / 1_000_000_000 ? .max : seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// Admits one log line per interval and counts the ones it held back.
final class RateLimit: Sendable {
    private let state = Mutex<(last: Int64?, suppressed: Int)>((nil, 0))
    private let interval: Int64

    init(intervalMilliseconds: Int64) { interval = intervalMilliseconds }

    /// The number suppressed since the last admitted line, or `nil` to stay quiet now.
    func admit(now: Timestamp) -> Int? {
        state.withLock { state -> Int? in
            if let last = state.last, now.milliseconds - last < interval {
                state.suppressed += 1
                return nil
            }
            defer { state = (now.milliseconds, 0) }
            return state.suppressed
        }
    }
}
