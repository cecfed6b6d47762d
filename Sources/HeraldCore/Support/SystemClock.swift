import Foundation
public import HeraldPluginAPI

/// The real wall clock.
public struct SystemClock: WallClock {
    /// Creates the clock.
    public init() {}
    /// Now, in milliseconds since the epoch.
    public func now() -> Timestamp { Timestamp(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded())) }
}
