import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Loopback TCP helpers.
public enum Loopback {
    /// A port that is free now and that no other caller in this process will be given.
    ///
    /// Ports come from below the kernel's ephemeral range (`ip_local_port_range`), in turn from a random
    /// start: a port the kernel picked for `bind(0)` could meanwhile become the local port of some
    /// outgoing connection (tests make many), and a server started a moment later would then find its
    /// address in use.
    public static func freePort() throws -> Int {
        let ceiling = ephemeralRangeStart
        let span = ceiling - 10_000
        for _ in 0..<span {
            let port = 10_000 + nextCandidate.add(1, ordering: .relaxed).oldValue % span
            if canBind(port: port) { return port }
        }
        throw TestKitError("no free port below \(ceiling)")
    }

    private static let ephemeralRangeStart: Int = {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        return text.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) }.map { max(12_000, $0) } ?? 32_768
    }()

    private static let nextCandidate = Atomic<Int>(Int.random(in: 0..<20_000))

    private static func canBind(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var reuse: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    public static func isListening(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

extension Loopback {
    /// Opens a TCP connection to 127.0.0.1:`port` and sends `request`; the caller owns the descriptor.
    /// Used to play a client that stops reading (a stalled tail).
    public static func connectAndSend(port: Int, request: String) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestKitError("socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            close(fd)
            throw TestKitError("cannot connect to 127.0.0.1:\(port)")
        }
        var size: Int32 = 4096  // a small receive buffer, so the stall reaches the server quickly
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        _ = Array(request.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        return fd
    }

    /// A minimal HTTP/1.1 GET (Connection: close); returns the body.
    public static func get(port: Int, path: String) throws -> String {
        try exchange(port: port, request: "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    }

    /// A minimal HTTP/1.1 POST of a JSON body (Connection: close); returns the response body.
    public static func post(port: Int, path: String, json: String) throws -> String {
        try exchange(port: port, request: "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                        + "Content-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\n\r\n\(json)")
    }

    private static func exchange(port: Int, request: String) throws -> String {
        let fd = try connectAndSend(port: port, request: request)
        defer { close(fd) }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            response += chunk[0..<count]
        }
        let text = String(decoding: response, as: UTF8.self)
        return text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? text
    }
}
