/// Exponential backoff with full jitter: attempt *n* waits a random time in `0...min(cap, base·2ⁿ)`.
/// Jitter keeps many gateways from reconnecting in lockstep after a broker restart.
public struct Backoff: Sendable, Hashable {
    /// The first ceiling, in seconds.
    public var baseSeconds: Double
    /// The largest ceiling, in seconds.
    public var capSeconds: Double
    /// Failures since the last success.
    public private(set) var attempt = 0

    /// Creates a backoff policy.
    public init(baseSeconds: Double = 0.2, capSeconds: Double = 30) {
        self.baseSeconds = baseSeconds
        self.capSeconds = capSeconds
    }

    /// The ceiling for the current attempt.
    public var ceilingSeconds: Double {
        min(capSeconds, baseSeconds * Double(1 << min(attempt, 30)))
    }

    /// Returns the next delay and counts the failure.
    public mutating func nextDelaySeconds<G: RandomNumberGenerator>(using generator: inout G) -> Double {
        let ceiling = ceilingSeconds
        attempt += 1
        return Double.random(in: 0...ceiling, using: &generator)
    }

    /// Returns the next delay and counts the failure, using the system random generator.
    public mutating func nextDelaySeconds() -> Double {
        var generator = SystemRandomNumberGenerator()
        return nextDelaySeconds(using: &generator)
    }

    /// Forgets past failures after a success.
    public mutating func reset() { attempt = 0 }
}
