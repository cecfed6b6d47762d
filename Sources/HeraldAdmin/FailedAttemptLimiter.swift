import HeraldCore
import Synchronization

/// Counts failed token checks per client address and holds a client back once it has failed
/// `limit` times within `windowMilliseconds`: its requests are answered 429 until the window ends,
/// whatever token they carry, so guessing the token is slow. Other clients are not affected.
final class FailedAttemptLimiter: Sendable {
    private struct Window { var start: Int64; var failures: Int }
    private let windows = Mutex<[String: Window]>([:])
    let limit: Int
    let windowMilliseconds: Int64
    /// Clients tracked at most; the oldest windows are forgotten beyond it, so memory stays bounded.
    static let maxClients = 10_000

    init(limit: Int = 10, windowMilliseconds: Int64 = 60_000) {
        self.limit = limit
        self.windowMilliseconds = windowMilliseconds
    }

    /// Seconds the client must wait, or `nil` when it may try.
    func retryAfter(client: String, now: Int64) -> Int? {
        windows.withLock { windows -> Int? in
            guard let window = windows[client], now - window.start < windowMilliseconds else { return nil }
            guard window.failures >= limit else { return nil }
            return Int((window.start + windowMilliseconds - now + 999) / 1000)
        }
    }

    /// Records a failed check by `client`.
    func recordFailure(client: String, now: Int64) {
        windows.withLock { windows in
            if var window = windows[client], now - window.start < windowMilliseconds {
                window.failures += 1
                windows[client] = window
            } else {
                if windows.count >= Self.maxClients {
                    windows = windows.filter { now - $0.value.start < windowMilliseconds }
                    if windows.count >= Self.maxClients, let oldest = windows.min(by: { $0.value.start < $1.value.start })?.key {
                        windows[oldest] = nil
                    }
                }
                windows[client] = Window(start: now, failures: 1)
            }
        }
    }
}
