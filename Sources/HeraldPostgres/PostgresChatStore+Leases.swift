public import HeraldCore
import HeraldPluginAPI
import PostgresNIO

extension PostgresChatStore {
    /// Takes the lease when it is free or expired, renews it when `holder` has it; one statement.
    /// Times come from the server's clock, so instances on machines whose clocks differ agree.
    public func holdLease(_ name: String, holder: String, ttl: Duration) throws -> Bool {
        let milliseconds = ttl.nanoseconds / 1_000_000
        return try read { session in
            try session.query("""
                INSERT INTO leases (name, holder, acquired_at, expires_at)
                VALUES (\(name), \(holder), clock_timestamp(), clock_timestamp() + \(milliseconds) * interval '1 millisecond')
                ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at,
                    acquired_at = CASE WHEN leases.holder = excluded.holder THEN leases.acquired_at ELSE excluded.acquired_at END
                WHERE leases.holder = excluded.holder OR leases.expires_at < clock_timestamp()
                RETURNING holder
                """).map { try $0.decode(String.self) }.first == holder
        }
    }

    /// Expires the lease now if `holder` has it.
    public func releaseLease(_ name: String, holder: String) throws {
        try read { session in
            try session.execute("DELETE FROM leases WHERE name = \(name) AND holder = \(holder)")
        }
    }

    /// Leases that have not expired.
    public func activeLeases() throws -> [LeaseRecord] {
        try read { session in
            try session.query("""
                SELECT name, holder, (extract(epoch FROM expires_at - clock_timestamp()) * 1000)::int8 FROM leases
                WHERE expires_at >= clock_timestamp() ORDER BY name
                """).map { row in
                let (name, holder, remaining) = try row.decode((String, String, Int64).self)
                return LeaseRecord(name: name, holder: holder, expiresInMilliseconds: remaining)
            }
        }
    }
}
