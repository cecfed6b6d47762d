import Foundation
import HeraldTestKit
import Testing

/// Errors a user can cause name the problem and the fix in one line, as the real binary prints them.
@Suite("User errors are one line naming the problem and the fix")
struct UserErrorTests {
    /// Runs `herald ARGUMENTS` and returns its exit status and its output's non-empty lines.
    static func herald(_ arguments: [String]) async throws -> (status: Int32, lines: [String]) {
        let directory = try TemporaryDirectory()
        let child = try ChildProcess(executable: HeraldProcess.binary, arguments: arguments, logPath: directory.path("out.log"),
                                     environment: ["PATH": "/usr/bin:/bin"])
        let status = try await child.waitForExit()
        return (status, child.output.split(separator: "\n").map(String.init).filter { !$0.isEmpty })
    }

    static let valid = """
        store:
          path: STORE
        sources:
          - name: broker
            type: mqtt
            url: mqtt://127.0.0.1:1883
            client_id: herald-1
        sinks:
          - name: push
            type: mqtt
            url: mqtt://127.0.0.1:1883
            client_id: herald-push

        """

    static func config(_ directory: TemporaryDirectory, _ edit: (String) -> String) throws -> String {
        try directory.write("herald.yaml", edit(valid.replacingOccurrences(of: "STORE", with: directory.path("var/herald.sqlite"))))
    }

    @Test func theValidConfigPasses() async throws {
        let directory = try TemporaryDirectory()
        let result = try await Self.herald(["check", "--config", try Self.config(directory) { $0 }])
        #expect(result.status == 0, "\(result.lines)")
    }

    @Test func aWrongBrokerURLNamesTheSchemesAllowed() async throws {
        let directory = try TemporaryDirectory()
        let path = try Self.config(directory) { $0.replacingOccurrences(of: "url: mqtt://127.0.0.1:1883\n    client_id: herald-1",
                                                                         with: "url: tcp://127.0.0.1:1883\n    client_id: herald-1") }
        let result = try await Self.herald(["check", "--config", path])
        #expect(result.status == 78)
        #expect(result.lines == ["error: \(path):6:10: sources[0].url: scheme must be mqtt or mqtts, found tcp"], "\(result.lines)")
    }

    @Test func anUnknownAdapterTypeListsTheKnownOnes() async throws {
        let directory = try TemporaryDirectory()
        let path = try Self.config(directory) { $0.replacingOccurrences(of: "name: push\n    type: mqtt", with: "name: push\n    type: mqttt") }
        let result = try await Self.herald(["check", "--config", path])
        #expect(result.status == 78)
        #expect(result.lines.count == 1 && result.lines[0].contains("sinks[0].type: unknown adapter type \"mqttt\"; known: mqtt, webhook"),
                "\(result.lines)")
    }

    @Test func aStorePathUnderAFileIsRefusedBeforeStart() async throws {
        let directory = try TemporaryDirectory()
        let blocker = try directory.write("not-a-folder", "")
        let path = try Self.config(directory) { $0.replacingOccurrences(of: directory.path("var/herald.sqlite"), with: blocker + "/sub/herald.sqlite") }
        for command in ["check", "run"] {
            let result = try await Self.herald([command, "--config", path])
            #expect(result.status == 78)
            #expect(result.lines.count == 1 && result.lines[0].contains("store.path: \(blocker) is a file")
                    && result.lines[0].contains("choose another path"), "\(command): \(result.lines)")
        }
    }

    /// `herald check` (the systemd unit's ExecStartPre) finds a TLS file that is not there before the server
    /// is ever asked.
    @Test func anUnreadableTLSFileOfThePostgreSQLStoreIsRefusedBeforeStart() async throws {
        let directory = try TemporaryDirectory()
        let ca = try directory.write("ca.pem", "")
        let missing = directory.path("client.key")
        let url = "postgres://herald@db.example.com/chats?sslrootcert=\(ca)&sslcert=\(ca)&sslkey=\(missing)"
        let path = try Self.config(directory) { $0.replacingOccurrences(of: "  path: \(directory.path("var/herald.sqlite"))", with: "  url: \(url)") }
        for command in ["check", "run"] {
            let result = try await Self.herald([command, "--config", path])
            #expect(result.status == 78)
            #expect(result.lines == ["error: \(path):2:8: store.url: sslkey: cannot read \(missing) (does it exist, and may Herald's user read it?)"],
                    "\(command): \(result.lines)")
        }
    }

    /// A wrong parameter in the PostgreSQL URL is one line with the file, the line and the key, naming the
    /// key once.
    @Test func aWrongParameterOfThePostgreSQLURLIsRefusedWithItsLine() async throws {
        let directory = try TemporaryDirectory()
        for (query, message) in [("connect_timeout=0", "connect_timeout must be whole seconds from 1 to 3600, got 0"),
                                 ("target_session_attrs=standby", "target_session_attrs=standby cannot work for Herald, which writes")] {
            let url = "postgres://herald@db.example.com/chats?\(query)"
            let path = try Self.config(directory) { $0.replacingOccurrences(of: "  path: \(directory.path("var/herald.sqlite"))", with: "  url: \(url)") }
            let result = try await Self.herald(["check", "--config", path])
            #expect(result.status == 78)
            #expect(result.lines.count == 1 && result.lines[0].hasPrefix("error: \(path):2:8: store.url: \(message)"), "\(result.lines)")
        }
    }

    @Test func aBadTailFilterPointsAtTheColumn() async throws {
        let result = try await Self.herald(["tail", "--url", "http://127.0.0.1:1", "--where", "message.frm == \"x\""])
        #expect(result.status != 0)
        #expect(result.lines.first?.hasPrefix("error: --where: unknown field \"message.frm\" (fields: type, chat,") == true, "\(result.lines)")
        #expect(result.lines.dropFirst().first == "  message.frm == \"x\"" && result.lines.dropFirst(2).first == "  ^", "\(result.lines)")
    }

    @Test func aMissingConfigFileSaysSo() async throws {
        let result = try await Self.herald(["check", "--config", "/nonexistent/herald.yaml"])
        #expect(result.status == 78)
        #expect(result.lines == ["error: /nonexistent/herald.yaml: cannot read the file (does it exist and is it UTF-8?)"], "\(result.lines)")
    }
}
