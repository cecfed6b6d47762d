import Foundation

/// Reads an HTTP `Retry-After` value: delay seconds (`120`) or an HTTP date
/// (`Wed, 21 Oct 2015 07:28:00 GMT`). Returns seconds from `now`, at least 0, at most `cap`.
public enum RetryAfter {
    /// Seconds to wait, or `nil` when the value is absent or unreadable.
    public static func seconds(_ value: String?, now: Date = Date(), cap: Double = 3600) -> Double? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Double(value), seconds.isFinite, seconds >= 0 { return min(seconds, cap) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: value) { return min(max(date.timeIntervalSince(now), 0), cap) }
        }
        return nil
    }
}
