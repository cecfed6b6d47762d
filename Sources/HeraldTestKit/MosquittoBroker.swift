import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A real `mosquitto` broker on 127.0.0.1 and a free port, with its own config and persistence
/// directory, for tests and benchmarks. Persistence is on and the per-client queue unlimited, so a
/// persistent session keeps every QoS 1 message while its client is away.
///
/// Like a production broker, it saves its persistence file when it stops (``stop()`` sends SIGTERM)
/// and autosaves rarely (mosquitto's default, every 30 minutes), not every second: mosquitto saves on
/// its only thread, and a save that waits on a busy disk stalls every client for as long (up to
/// 0.75 s measured here), which a latency measurement would then charge to whoever it measures.
public final class MosquittoBroker: Sendable {
    /// The listening port.
    public let port: Int
    /// `mqtt://127.0.0.1:PORT`
    public var url: String { "mqtt://127.0.0.1:\(port)" }
    private let directory: TemporaryDirectory
    private let configPath: String
    private let current: Mutex<ChildProcess?>

    /// Starts a broker. `extraConfig` lines are appended to the generated config.
    public init(extraConfig: String = "") async throws {
        directory = try TemporaryDirectory(prefix: "herald-broker")
        port = try Loopback.freePort()
        let persistence = directory.path("data") + "/"
        try FileManager.default.createDirectory(atPath: persistence, withIntermediateDirectories: true)
        configPath = try directory.write("mosquitto.conf", """
            listener \(port) 127.0.0.1
            allow_anonymous true
            user \(Self.currentUser)
            persistence true
            persistence_location \(persistence)
            max_queued_messages 0
            max_inflight_messages 10000
            set_tcp_nodelay true
            \(extraConfig)
            """)
        current = Mutex(nil)
        try await start()
    }

    /// Starts (or restarts) the broker process on the same port and data.
    public func start() async throws {
        let process = try ChildProcess(executable: Self.executable, arguments: ["-c", configPath],
                                       logPath: directory.path("mosquitto-\(UUID().uuidString.prefix(4)).log"))
        current.withLock { $0 = process }
        try await eventually("mosquitto to listen on \(port)", timeout: .seconds(60)) {
            guard process.isRunning else { throw TestKitError("mosquitto exited: \(process.output)") }
            return Loopback.isListening(port: port)
        }
    }

    /// Stops the broker with SIGTERM (it saves its persistence file) and waits.
    public func stop() async throws {
        guard let process = current.withLock({ $0 }) else { return }
        process.signal(SIGTERM)
        do {
            _ = try await process.waitForExit()
        } catch {
            throw TestKitError("\(error); broker log:\n\(process.output)")
        }
        current.withLock { $0 = nil }
    }

    /// The running broker's process id, or nil while it is stopped.
    public var pid: pid_t? { current.withLock { $0 }?.pid }

    /// The running broker's log.
    public var log: String { current.withLock { $0 }?.output ?? "" }

    /// The user the tests run as, so the broker can write its persistence directory.
    static var currentUser: String {
        guard let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name else { return "root" }
        return String(cString: name)
    }

    deinit { current.withLock { $0 }?.signal(SIGKILL) }

    /// The `mosquitto` binary: Debian installs it in /usr/sbin, which is not on every user's PATH.
    public static var executable: String {
        ["/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto", "/usr/bin/mosquitto"].first { FileManager.default.isExecutableFile(atPath: $0) }
            ?? "mosquitto"
    }
}
