import Foundation

extension PostgresStoreSettings {
    /// One server a URL names: `HOST:PORT`, or `[ADDRESS]:PORT` for IPv6.
    public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
        /// Host name or address.
        public var host: String
        /// Port.
        public var port: Int

        /// Creates an endpoint.
        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// `host:port`, an IPv6 address in brackets.
        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    /// Splits libpq's list of servers, `postgres://USER@HOST1:PORT1,HOST2:PORT2/DATABASE`, out of `text`:
    /// returns the servers, or `nil` when the URL names one, and the URL with only the first of them (for
    /// the rest of the parsing).
    static func splitServers(_ text: String) throws(PostgresSettingsError) -> (endpoints: [Endpoint], firstOnly: String)? {
        guard let start = text.range(of: "://") else { return nil }
        let rest = text[start.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let hostsStart = authority.lastIndex(of: "@").map { authority.index(after: $0) } ?? authority.startIndex
        let hosts = authority[hostsStart...]
        guard hosts.contains(",") else { return nil }
        var endpoints: [Endpoint] = []
        for item in hosts.split(separator: ",", omittingEmptySubsequences: false) {
            endpoints.append(try endpoint(String(item)))
        }
        return (endpoints, String(text[..<hostsStart]) + endpoints[0].description + String(rest[authorityEnd...]))
    }

    /// Parses `HOST[:PORT]` or `[ADDRESS][:PORT]`; the port defaults to 5432.
    private static func endpoint(_ item: String) throws(PostgresSettingsError) -> Endpoint {
        var host = item, portText: Substring?
        if item.hasPrefix("["), let close = item.firstIndex(of: "]") {
            host = String(item[item.index(after: item.startIndex)..<close])
            let after = item[item.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty { host = "" }
        } else if let colon = item.lastIndex(of: ":") {
            host = String(item[..<colon])
            portText = item[item.index(after: colon)...]
        }
        guard !host.isEmpty else { throw PostgresSettingsError("store.url: \"\(item)\" in its list of servers names no host") }
        guard let portText else { return Endpoint(host: host, port: 5432) }
        guard let port = Int(portText), (1...65535).contains(port) else {
            throw PostgresSettingsError("store.url: \"\(item)\" in its list of servers has no valid port")
        }
        return Endpoint(host: host, port: port)
    }
}
