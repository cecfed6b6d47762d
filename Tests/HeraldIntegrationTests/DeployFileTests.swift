import Foundation
import HeraldTestKit
import Testing

/// The files in deploy/ work as shipped: the systemd unit passes `systemd-analyze verify`, and the
/// production broker config starts a real mosquitto that admits only authenticated TLS clients and
/// lets each user publish client events only under their own name.
@Suite("deploy/ files")
struct DeployFileTests {
    static let root = ShippedConfigTests.root

    static func run(_ executable: String, _ arguments: [String], in directory: TemporaryDirectory,
                    log: String) async throws -> (status: Int32, output: String) {
        let child = try ChildProcess(executable: executable, arguments: arguments, logPath: directory.path(log))
        return (try await child.waitForExit(), child.output)
    }

    /// The single-instance unit, and the template one instance of several runs under (verified as `herald@a`).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze")),
          arguments: [("herald.service", "herald.service"), ("herald@.service", "herald@a.service")])
    func theSystemdUnitVerifiesCleanly(_ file: String, _ instance: String) async throws {
        let directory = try TemporaryDirectory()
        let unit = try String(contentsOf: Self.root.appendingPathComponent("deploy/systemd/\(file)"), encoding: .utf8)
        // The unit names the installed binary; verify it against the one built here.
        let path = try directory.write(instance, unit.replacingOccurrences(of: "/usr/local/bin/herald", with: HeraldProcess.binary))
        let result = try await Self.run("/usr/bin/systemd-analyze", ["verify", path], in: directory, log: "verify.log")
        #expect(result.status == 0 && result.output.isEmpty, "systemd-analyze verify: \(result.output)")
        #expect(unit.contains("ExecStartPre=/usr/local/bin/herald check"), "the unit checks the config before start")
    }

    /// The daily badge check: the timer and the one-shot unit it starts.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze")))
    func theBadgeCheckTimerAndItsUnitVerifyCleanly() async throws {
        let directory = try TemporaryDirectory()
        var paths: [String] = []
        for file in ["herald-verify.service", "herald-verify.timer"] {
            let unit = try String(contentsOf: Self.root.appendingPathComponent("deploy/systemd/\(file)"), encoding: .utf8)
            paths.append(try directory.write(file, unit.replacingOccurrences(of: "/usr/local/bin/herald", with: HeraldProcess.binary)))
        }
        let result = try await Self.run("/usr/bin/systemd-analyze", ["verify"] + paths, in: directory, log: "verify.log")
        #expect(result.status == 0 && result.output.isEmpty, "systemd-analyze verify: \(result.output)")
        let service = try String(contentsOfFile: paths[0], encoding: .utf8)
        #expect(service.contains("herald store verify --config ${HERALD_CONFIG}") && service.contains("Type=oneshot"))
    }

    @Test func theProductionBrokerAdmitsOnlyAuthenticatedTLSClientsAndEnforcesTheACL() async throws {
        let directory = try TemporaryDirectory()
        let certificates = try await TestCertificates(in: directory)
        let port = try Loopback.freePort()
        let passwords = directory.path("passwd")
        for (user, password) in [("herald", "h-secret"), ("bob", "b-secret")] {
            let created = try await Self.run("/usr/bin/mosquitto_passwd", (user == "herald" ? ["-c"] : []) + ["-b", passwords, user, password],
                                             in: directory, log: "passwd-\(user).log")
            #expect(created.status == 0, "\(created.output)")
        }
        var config = try String(contentsOf: Self.root.appendingPathComponent("deploy/mosquitto/mosquitto-production.conf"), encoding: .utf8)
        for (shipped, here) in [("listener 8883", "listener \(port) 127.0.0.1"), ("/etc/mosquitto/certs/ca.pem", certificates.caFile),
                                ("/etc/mosquitto/certs/broker.pem", certificates.serverCertFile),
                                ("/etc/mosquitto/certs/broker.key", certificates.serverKeyFile), ("/etc/mosquitto/passwd", passwords),
                                ("/etc/mosquitto/acl", Self.root.appendingPathComponent("deploy/mosquitto/acl").path),
                                ("/var/lib/mosquitto/", directory.path("persistence") + "/")] {
            #expect(config.contains(shipped), "\(shipped)")
            config = config.replacingOccurrences(of: shipped, with: here)
        }
        try FileManager.default.createDirectory(atPath: directory.path("persistence"), withIntermediateDirectories: true)
        // mosquitto started as root drops to the `mosquitto` user, which must read the files it is given.
        _ = try await Self.run("/bin/chmod", ["-R", "a+rX", directory.path("")], in: directory, log: "chmod.log")
        let broker = try ChildProcess(executable: MosquittoBroker.executable, arguments: ["-c", try directory.write("mosquitto.conf", config)],
                                      logPath: directory.path("mosquitto.log"))
        defer { broker.signal(SIGKILL) }
        try await eventually("the production broker listening on \(port)") { Loopback.isListening(port: port) }

        func client(_ tool: String, _ user: String?, _ password: String?, _ arguments: [String]) -> [String] {
            ["-h", "localhost", "-p", "\(port)", "--cafile", certificates.caFile, "-q", "1"]
                + (user.map { ["-u", $0, "-P", password ?? ""] } ?? []) + arguments
        }
        let anonymous = try await Self.run("/usr/bin/mosquitto_pub", client("pub", nil, nil, ["-t", "chats/c1/messages", "-m", "x"]),
                                           in: directory, log: "anonymous.log")
        #expect(anonymous.status != 0, "an anonymous client is refused: \(anonymous.output)")
        let wrongPassword = try await Self.run("/usr/bin/mosquitto_pub", client("pub", "bob", "wrong", ["-t", "users/bob/read", "-m", "x"]),
                                               in: directory, log: "wrong.log")
        #expect(wrongPassword.status != 0, "a wrong password is refused: \(wrongPassword.output)")
        let plain = try await Self.run("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", "\(port)", "-u", "bob", "-P", "b-secret",
                                                                  "-t", "users/bob/read", "-m", "x"], in: directory, log: "plain.log")
        #expect(plain.status != 0, "plain text is refused on the TLS listener: \(plain.output)")

        // Herald's persistent session subscribes to every user's reads; bob publishes one read as alice (the
        // ACL drops it) and then one as himself. The session then holds bob's read alone.
        let session = ["-i", "herald-acl-test", "-c", "-t", "users/+/read", "-v"]
        let subscribed = try await Self.run("/usr/bin/mosquitto_sub", client("sub", "herald", "h-secret", session + ["-E"]),
                                            in: directory, log: "subscribe.log")
        #expect(subscribed.status == 0, "\(subscribed.output)")
        for (topic, body) in [("users/alice/read", "forged"), ("users/bob/read", "genuine")] {
            let published = try await Self.run("/usr/bin/mosquitto_pub", client("pub", "bob", "b-secret", ["-t", topic, "-m", body]),
                                               in: directory, log: "publish-\(body).log")
            #expect(published.status == 0, "\(published.output)")
        }
        let received = try await Self.run("/usr/bin/mosquitto_sub", client("sub", "herald", "h-secret", session + ["-C", "1", "-W", "30"]),
                                          in: directory, log: "receive.log")
        #expect(received.status == 0 && received.output == "users/bob/read genuine\n", "\(received.output)")
    }
}
