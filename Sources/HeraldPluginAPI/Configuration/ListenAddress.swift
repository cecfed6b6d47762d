import Foundation

/// A `host:port` a server listens on (the admin API, the HTTP source), with IPv6 hosts in brackets.
public struct ListenAddress: Sendable, Hashable {
    /// The host, without brackets.
    public var host: String
    /// The port.
    public var port: Int

    /// Parses `host:port`; `nil` when it is not one.
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            return nil
        }
        let host = String(text[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        guard !host.isEmpty else { return nil }
        self.host = host
        self.port = port
    }

    /// Whether only this machine can reach it.
    public var isLoopback: Bool { Self.isLoopback(host: host) }

    /// Whether `host` names this machine only (`localhost`, `::1`, `127.x.x.x`).
    public static func isLoopback(host: String) -> Bool { host == "localhost" || host == "::1" || host.hasPrefix("127.") }
}
