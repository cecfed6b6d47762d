import Foundation
public import HeraldCore
public import Logging
public import CoreMetrics

extension StoreSection {
    /// Opens the store this section names: PostgreSQL when `url` is set, else the SQLite file at `path`,
    /// migrating it if it is older than this Herald (`logger` says so first). A PostgreSQL store reports its
    /// connections to `metrics`.
    public func open(logger: Logger, metrics: any MetricsFactory = NOOPMetricsHandler.instance,
                     environment: [String: String] = ProcessInfo.processInfo.environment) throws -> any GatewayStore {
        guard let settings = try postgresSettings(environment: environment) else { return try openSQLiteStore(logger: logger) }
        return try PostgresChatStore(settings: settings, logger: logger, metrics: metrics) { pending in
            logger.notice("Migrating the store.", metadata: ["url": "\(settings)", "migrations": "\(pending.joined(separator: ", "))"])
        }
    }
}
