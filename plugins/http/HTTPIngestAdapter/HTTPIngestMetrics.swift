import HeraldPluginAPI
import Metrics

/// The HTTP source's own metrics beside the standard source counters: requests by answer status and
/// how long answering took (commit included).
struct HTTPIngestMetrics: Sendable {
    private let requests: [Int: Counter]
    private let other: Counter
    /// Seconds from the request's arrival to its answer.
    let duration: Timer

    /// The statuses the source answers with.
    static let statuses = [202, 400, 401, 408, 413, 415, 429, 503]

    init(adapter: String, factory: any MetricsFactory) {
        var requests: [Int: Counter] = [:]
        for status in Self.statuses {
            requests[status] = Counter(label: "herald_http_requests_total", dimensions: [("adapter", adapter), ("status", "\(status)")],
                                       factory: factory)
        }
        self.requests = requests
        other = Counter(label: "herald_http_requests_total", dimensions: [("adapter", adapter), ("status", "other")], factory: factory)
        duration = Timer(label: "herald_http_request_duration_seconds", dimensions: [("adapter", adapter)],
                         preferredDisplayUnit: .seconds, factory: factory)
    }

    /// Counts one answer.
    func answered(_ status: Int) { (requests[status] ?? other).increment() }
}
