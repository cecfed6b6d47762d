import HeraldCore
import CoreMetrics

/// What a metrics scrape shows of Herald's connections to PostgreSQL, per role (`writer`, `reader`,
/// `maintenance`, `listener`) and server (`HOST:PORT`): connections opened, connections refused and why, and
/// which server each role is connected to. A failover reads as the writer's `herald_store_connected` moving
/// from one server to another.
struct StoreConnectionMetrics: Sendable {
    let factory: any MetricsFactory
    let role: String

    /// Metrics for `role`'s connections, reported to `factory`.
    init(factory: any MetricsFactory, role: String) {
        self.factory = factory
        self.role = role
    }

    /// A connection to `server` opened and accepts writes.
    func opened(_ server: PostgresStoreSettings.Endpoint) {
        Counter(label: "herald_store_connects_total", dimensions: dimensions(server), factory: factory).increment()
        connected(server, true)
    }

    /// The connection to `server` is gone (closed, broken, or refused as read-only).
    func closed(_ server: PostgresStoreSettings.Endpoint) { connected(server, false) }

    /// A connection to `server` was refused: `read_only`, `timeout` (no answer within `connect_timeout`),
    /// `unreachable` (refused, TLS, login), or `error` (a statement failed while the connection was set up).
    func refused(_ server: PostgresStoreSettings.Endpoint, _ error: any Error) {
        let reason = switch error as? PostgresStoreError {
        case .readOnly?: "read_only"
        case .unreachable(_, let detail)? where detail.hasSuffix("(connect_timeout)"): "timeout"
        case .unreachable?: "unreachable"
        default: "error"
        }
        Counter(label: "herald_store_connection_failures_total", dimensions: dimensions(server) + [("reason", reason)], factory: factory).increment()
    }

    private func connected(_ server: PostgresStoreSettings.Endpoint, _ value: Bool) {
        Gauge(label: "herald_store_connected", dimensions: dimensions(server), factory: factory).record(value ? 1 : 0)
    }

    private func dimensions(_ server: PostgresStoreSettings.Endpoint) -> [(String, String)] { [("role", role), ("server", "\(server)")] }
}
