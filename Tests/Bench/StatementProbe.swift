import Foundation
import GRDB

/// Measures GRDB's per-statement cost with cached statements: bound arguments vs raw binding.
func statementProbe(path: String) throws {
    let pool = try DatabasePool(path: path)
    try pool.write { db in try db.execute(sql: "CREATE TABLE IF NOT EXISTS t(a INTEGER PRIMARY KEY, b TEXT, c TEXT, d BLOB)") }
    let count = 50_000
    var start = ContinuousClock.now
    try pool.write { db in
        for index in 0..<count {
            try db.cachedStatement(sql: "INSERT INTO t(b, c, d) VALUES (?, ?, ?)").execute(arguments: ["user\(index)", "kind", Data(repeating: 1, count: 150)])
        }
    }
    print("GRDB execute(arguments:): \(format(Double(count) / seconds(ContinuousClock.now - start))) stmt/s")
    start = ContinuousClock.now
    try pool.write { db in
        let statement = try db.cachedStatement(sql: "INSERT INTO t(b, c, d) VALUES (?, ?, ?)")
        for index in 0..<count {
            statement.setUncheckedArguments(["user\(index)", "kind", Data(repeating: 1, count: 150)])
            try statement.execute()
        }
    }
    print("GRDB setUncheckedArguments: \(format(Double(count) / seconds(ContinuousClock.now - start))) stmt/s")
}
