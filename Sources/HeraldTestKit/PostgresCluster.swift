import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A real PostgreSQL server on 127.0.0.1 and a free port, in a temporary directory, for tests and
/// benchmarks. `initdb` refuses to run as root, so as root the server runs as the `postgres` system
/// user (Debian's `postgresql` package creates it). A watchdog shell stops the server when the
/// process that started it exits, however it exits, so no test run leaves a server behind.
///
/// Each test takes its own database (``createDatabase()``), so tests share one server per process
/// (``shared()``) and still never see each other's rows.
public final class PostgresCluster: Sendable {
    /// The listening port.
    public let port: Int
    /// The role every database belongs to (trust authentication on loopback).
    public let user = "herald"
    private let directory: TemporaryDirectory
    private let running: Mutex<ChildProcess>
    /// The shell line that starts the server with a watchdog (see ``init(durable:)``).
    private let script: String
    private let databases = Atomic<Int>(0)
    /// An ICU locale (`en-US`) for the default collation of the databases ``createDatabase()`` makes,
    /// or `nil` for the cluster's (C.UTF-8).
    public let icuLocale: String?

    /// Starts a new cluster. `durable: false` turns fsync off, for tests; benchmarks keep it on.
    /// `icuLocale` sets the default collation of the databases it creates. With `tls`, the server
    /// speaks TLS 1.2 or newer with `tls`'s server certificate (for `localhost`) and trusts its CA for
    /// client certificates; see ``tlsAccessRules`` for who may connect how. With `standbyOf`, the new
    /// cluster is a streaming standby of that one (a base backup of it, read-only until ``promote()``).
    /// `settings` are more server settings (`-c NAME=VALUE`), for example to load an extension.
    public init(durable: Bool = false, icuLocale: String? = nil, tls: TestCertificates? = nil, standbyOf primary: PostgresCluster? = nil,
                settings extra: [(name: String, value: String)] = []) async throws {
        self.icuLocale = icuLocale
        let binaries = try Self.binaries()
        directory = try TemporaryDirectory(prefix: "herald-postgres")
        port = try Loopback.freePort()
        let data = directory.path("data")
        let runAs = Self.runAsPrefix()
        if !runAs.isEmpty { try await Command.run("/bin/chown", ["-R", "postgres", directory.path("")]) }
        let create = if let primary {
            runAs + ["\(binaries)/pg_basebackup", "-h", "127.0.0.1", "-p", "\(primary.port)", "-U", user, "-D", data, "-R", "-X", "stream", "--no-sync"]
        } else {
            runAs + ["\(binaries)/initdb", "-D", data, "-A", "trust", "-U", user, "--no-sync", "-E", "UTF8"]
        }
        try await Command.run(create[0], Array(create.dropFirst()))
        // The shared cluster serves every PostgreSQL test at once, each gateway with its own pool: room for them.
        let settings = ["-p", "\(port)", "-k", directory.path(""), "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300"]
            + (durable ? [] : ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                               // Checkpoints cost little without fsync; fewer kept WAL files keep a test cluster small.
                               "-c", "max_wal_size=256MB", "-c", "min_wal_size=32MB"])
            + extra.flatMap { ["-c", "\($0.name)=\($0.value)"] }
        let tlsSettings = if let tls { try await Self.installTLS(tls, data: data, chown: !runAs.isEmpty) } else { [String]() }
        let command = (runAs + ["\(binaries)/postgres", "-D", data] + settings + tlsSettings).map(Self.quoted).joined(separator: " ")
        // The watchdog: the server runs as a child of this shell, which stops it (fast shutdown) once
        // the test process is gone or the server exits. Once the test process is gone it also removes the
        // cluster's directory: a shared cluster lives as long as the process, whose exit runs no deinit.
        script = """
            \(command) & server=$!
            while kill -0 \(getpid()) 2>/dev/null && kill -0 $server 2>/dev/null; do sleep 0.5; done
            kill -INT $server 2>/dev/null; wait $server
            kill -0 \(getpid()) 2>/dev/null || rm -rf \(Self.quoted(directory.path("")))
            """
        running = Mutex(try ChildProcess(executable: "/bin/sh", arguments: ["-c", script], logPath: directory.path("server.log")))
        try await waitUntilAccepting()
    }

    /// Stops the server (fast shutdown: sessions are cut, as when a database goes away) and waits
    /// until it has exited. ``start()`` brings it back on the same port with the same data.
    public func stop() async throws {
        let stop = Self.runAsPrefix() + ["\(try Self.binaries())/pg_ctl", "stop", "-D", directory.path("data"), "-m", "fast", "-w"]
        try await Command.run(stop[0], Array(stop.dropFirst()))
        // The watchdog shell ends once its server has.
        _ = try await running.withLock { $0 }.waitForExit(timeout: .seconds(60))
    }

    /// Starts the server again after ``stop()``.
    public func start() async throws {
        let log = directory.path("server-\(UUID().uuidString.prefix(6)).log")
        let server = try ChildProcess(executable: "/bin/sh", arguments: ["-c", script], logPath: log)
        running.withLock { $0 = server }
        try await waitUntilAccepting()
    }

    private func waitUntilAccepting() async throws {
        let port = port
        let server = running.withLock { $0 }
        try await eventually("PostgreSQL to accept connections on \(port)", timeout: .seconds(60)) {
            guard server.isRunning else { throw TestKitError("PostgreSQL exited: \(server.output)") }
            return Loopback.isListening(port: port)
        }
        try await eventually("PostgreSQL to finish starting", timeout: .seconds(60)) {
            (try? await self.psql(database: "postgres", "SELECT 1")) != nil
        }
    }

    /// One cluster per test process, started on first use.
    public static func shared() async throws -> PostgresCluster {
        let task = sharedCluster.withLock { current in
            if let current { return current }
            let started = Task { try await PostgresCluster() }
            current = started
            return started
        }
        return try await task.value
    }

    private static let sharedCluster = Mutex<Task<PostgresCluster, any Error>?>(nil)

    /// Creates a new, empty database; returns its URL (`postgres://herald@127.0.0.1:PORT/NAME`). Its
    /// default collation is the cluster's (C.UTF-8), or ICU's ``icuLocale`` when that is set.
    public func createDatabase() async throws -> String {
        let name = "herald_\(getpid())_\(databases.add(1, ordering: .relaxed).newValue)"
        if let locale = icuLocale {
            try await psql(database: "postgres", "CREATE DATABASE \(name) TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE '\(locale)' LOCALE 'C.UTF-8'")
        } else {
            try await psql(database: "postgres", "CREATE DATABASE \(name)")
        }
        return url(database: name)
    }

    /// The URL of a database on this cluster.
    public func url(database: String) -> String { "postgres://\(user)@127.0.0.1:\(port)/\(database)" }

    /// Runs SQL with `psql` and returns its unaligned output.
    @discardableResult
    public func psql(database: String, _ sql: String) async throws -> String {
        try await Command.run("/usr/bin/psql", ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(port)",
                                       "-U", user, "-d", database, "-c", sql])
    }

    /// The postmaster's process id (from its pid file), or `nil` while it is not running.
    public var postmasterPID: pid_t? {
        let text = (try? String(contentsOfFile: directory.path("data/postmaster.pid"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").first.flatMap { pid_t($0) }
    }

    /// CPU seconds the server has used: the postmaster with the backends it reaped, plus the live ones.
    public func cpuSeconds() -> Double {
        guard let postmaster = postmasterPID else { return 0 }
        var total = ProcessTable.entry(postmaster).map { $0.ownSeconds + $0.reapedSeconds } ?? 0
        for child in ProcessTable.children(of: postmaster) { total += child.ownSeconds }
        return total
    }

    /// Freezes the server (SIGSTOP to the postmaster and every backend): connections stay open and
    /// nothing answers, as with a hung host or a network partition. ``thaw()`` lets it go on.
    public func freeze() {
        guard let postmaster = postmasterPID else { return }
        kill(postmaster, SIGSTOP)
        for child in ProcessTable.children(of: postmaster) { kill(child.pid, SIGSTOP) }
    }

    /// Lets a frozen server go on.
    public func thaw() {
        guard let postmaster = postmasterPID else { return }
        for child in ProcessTable.children(of: postmaster) { kill(child.pid, SIGCONT) }
        kill(postmaster, SIGCONT)
    }

    /// The server's log.
    public var log: String { running.withLock { $0.output } }

    /// Stops the server itself (fast shutdown): the watchdog shell's process is killed outright when it is
    /// released, so it cannot be relied on to stop a server that a test of its own started. The cluster's
    /// directory is removed once the server has removed its pid file, its last act, and not while it still
    /// writes its files there (which left a directory behind in /tmp); a thread of its own waits for that,
    /// not one of Swift's few cooperative threads.
    deinit {
        let watchdog = running.withLock { $0 }
        guard let postmaster = postmasterPID else {
            watchdog.signal(SIGTERM)
            return
        }
        thaw()  // a frozen server would not take the signal
        kill(postmaster, SIGINT)
        let directory = directory, pidFile = directory.path("data/postmaster.pid")
        DispatchQueue(label: "herald-test-postgres-stop").async {
            let deadline = ContinuousClock.now + .seconds(10)
            while FileManager.default.fileExists(atPath: pidFile), kill(postmaster, 0) == 0, ContinuousClock.now < deadline {
                usleep(20_000)
            }
            watchdog.signal(SIGTERM)
            withExtendedLifetime(directory) {}  // removed when this block is released, after the server stopped
        }
    }

    /// `pg_hba.conf` of a TLS cluster: on loopback only TLS; a database named ``certificateDatabase``
    /// admits a role by a client certificate whose common name is the role's name, every other database
    /// trusts the role it is told.
    public static let tlsAccessRules = """
        local all all trust
        hostssl \(certificateDatabase) all 127.0.0.1/32 cert
        hostssl all all 127.0.0.1/32 trust
        host all all 127.0.0.1/32 reject
        """

    /// Makes a standby the primary (`pg_promote()`, which waits until it is).
    public func promote() async throws {
        try await psql(database: "postgres", "SELECT pg_promote()")
    }

    /// Makes `role` log in over TCP with its password (SCRAM-SHA-256) from now on, ahead of the rules that
    /// trust every other role, and has the server read its rules again.
    public func requirePassword(for role: String) async throws {
        let rules = directory.path("data/pg_hba.conf")
        let current = try String(contentsOfFile: rules, encoding: .utf8)
        try ("host all \(role) 127.0.0.1/32 scram-sha-256\n" + current).write(toFile: rules, atomically: true, encoding: .utf8)
        try await psql(database: "postgres", "SELECT pg_reload_conf()")
    }

    /// The database of a TLS cluster that admits roles by client certificate only.
    public static let certificateDatabase = "certified"

    /// Copies the server's certificate, key and CA into the data directory (the key readable by the server
    /// alone, as it demands), writes ``tlsAccessRules``, and returns the server settings that use them.
    private static func installTLS(_ certificates: TestCertificates, data: String, chown: Bool) async throws -> [String] {
        let files = FileManager.default
        for (source, name) in [(certificates.serverCertFile, "server.crt"), (certificates.serverKeyFile, "server.key"), (certificates.caFile, "root.crt")] {
            let target = "\(data)/\(name)"
            try? files.removeItem(atPath: target)
            try files.copyItem(atPath: source, toPath: target)
            try files.setAttributes([.posixPermissions: 0o600], ofItemAtPath: target)
        }
        try tlsAccessRules.write(toFile: "\(data)/pg_hba.conf", atomically: true, encoding: .utf8)
        if chown { try await Command.run("/bin/chown", ["-R", "postgres", data]) }
        return ["-c", "ssl=on", "-c", "ssl_cert_file=server.crt", "-c", "ssl_key_file=server.key", "-c", "ssl_ca_file=root.crt",
                "-c", "ssl_min_protocol_version=TLSv1.2"]
    }

    /// Where the server binaries are: Debian's newest installed major version.
    static func binaries() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        guard let newest = versions.last, FileManager.default.isExecutableFile(atPath: "\(root)/\(newest)/bin/initdb") else {
            throw TestKitError("PostgreSQL server binaries not found under \(root): install Debian's postgresql package (make test-deps does)")
        }
        return "\(root)/\(newest)/bin"
    }

    /// As root, commands run as the `postgres` user.
    static func runAsPrefix() -> [String] {
        geteuid() == 0 ? ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"] : []
    }

    static func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }
}
