import Foundation
import HeraldTestKit
import Testing

/// Secrets never reach any output: Herald is configured with a known value for every kind of secret it
/// takes, then checked, run (logging at `trace`, where the service lifecycle describes every service it
/// starts), used, made to fail and stopped; every line it logged and every CLI output is searched for each value.
@Suite("Secrets never appear in any output")
struct SecretsTests {
    static let mqttPassword = "mqtt-pw-7Q2xK9"
    static let sinkPassword = "sink-pw-3Jr5Nb"
    static let adminToken = "admin-tok-4Lm8Zp"
    static let httpToken = "http-tok-9Vd3Rw"
    static let presentedToken = "http-tok-WRONG-6Kc2"
    static let webhookKey = "webhook-key-5Tn1Yq"
    static let databasePassword = "pg-pw-2Hs6Jc"
    static let upstreamToken = "rest-tok-8Pw4Gx"
    static let upstreamHeader = "rest-hdr-1Nc7Df"
    static var webhookSecret: String { "whsec_" + Data(webhookKey.utf8).base64EncodedString() }
    static var all: [String] {
        [mqttPassword, sinkPassword, adminToken, httpToken, presentedToken, webhookKey, webhookSecret,
         String(webhookSecret.dropFirst(6)), databasePassword, upstreamToken, upstreamHeader]
    }

    @Test func noSecretIsPrintedByCheckRunFailuresOrStop() async throws {
        let broker = try await MosquittoBroker()
        let directory = try TemporaryDirectory()
        let httpPort = try Loopback.freePort(), adminPort = try Loopback.freePort()
        let sinkPasswordFile = try directory.write("sink-password", Self.sinkPassword + "\n")
        let tokenFile = try directory.write("admin-token", Self.adminToken + "\n")
        let config = try directory.write("herald.yaml", """
            store:
              path: \(directory.path("store.sqlite"))
            outbox:
              drain_timeout_s: 0
            log:
              level: trace
            admin:
              listen: 127.0.0.1:\(adminPort)
              token: \(Self.adminToken)
            sources:
              - name: broker
                type: mqtt
                url: mqtt://127.0.0.1:\(broker.port)
                client_id: secrets-test
                username: herald
                password: \(Self.mqttPassword)
              - name: api
                type: http
                listen: 127.0.0.1:\(httpPort)
                tokens: [\(Self.httpToken)]
              - name: upstream
                type: rest
                token: \(Self.upstreamToken)
                headers: {X-Api-Key: \(Self.upstreamHeader)}
                endpoints:
                  - name: events
                    url: http://127.0.0.1:1/events
                    interval_s: 60
            sinks:
              - name: push
                type: mqtt
                url: mqtt://127.0.0.1:\(broker.port)
                client_id: secrets-test-push
                username: herald
                password_file: \(sinkPasswordFile)
              - name: hooks
                type: webhook
                urls: {notification: "http://127.0.0.1:1/hook"}
                secret: \(Self.webhookSecret)
                max_attempts: 2

            """)
        var outputs: [(String, String)] = []
        func cli(_ name: String, _ arguments: [String], environment: [String: String]? = nil) async throws -> Int32 {
            let child = try ChildProcess(executable: HeraldProcess.binary, arguments: arguments, logPath: directory.path("\(name).log"),
                                         environment: environment)
            let status = try await child.waitForExit()
            outputs.append((name, child.output))
            return status
        }
        #expect(try await cli("check", ["check", "--config", config]) == 0)

        let herald = try HeraldProcess(configPath: config, logPath: directory.path("run.log"))
        try await eventually("the gateway up") { herald.child.output.contains("HTTP source listening.") && herald.child.output.contains("Admin API listening.") }
        let url = "http://127.0.0.1:\(httpPort)/v1/events"
        #expect(try await HTTPIngestWorld.post(httpMessage("m1"), to: url, token: Self.presentedToken).status == 401)
        #expect(try await HTTPIngestWorld.post(httpMessage("m2"), to: url, token: Self.httpToken).status == 202)
        // The webhook sink fails against a closed port: the failure is logged with the request it made.
        try await eventually("the webhook sink to fail") { herald.child.output.contains("Sink delivery failed; retrying.") }
        #expect(try await cli("status", ["status", "--url", "http://127.0.0.1:\(adminPort)", "--token-file", tokenFile]) == 0)
        _ = try await cli("status-wrong", ["status", "--url", "http://127.0.0.1:\(adminPort)", "--token-file", sinkPasswordFile])
        _ = try await cli("dlq", ["dlq", "list", "--config", config])
        herald.child.signal(SIGTERM)
        #expect(try await herald.child.waitForExit() == 0)
        outputs.append(("run", herald.child.output))

        // A broken config beside its secrets, and a PostgreSQL store that cannot be reached.
        let broken = try directory.write("broken.yaml", try String(contentsOfFile: config, encoding: .utf8)
            .replacingOccurrences(of: "    password: ", with: "    pasword: "))
        #expect(try await cli("check-broken", ["check", "--config", broken]) == 78)
        let postgres = try directory.write("postgres.yaml", "store:\n  url: postgres://herald@127.0.0.1:1/herald\n")
        var environment = ProcessInfo.processInfo.environment
        environment["PGPASSWORD"] = Self.databasePassword
        #expect(try await cli("check-postgres", ["check", "--config", postgres], environment: environment) == 0)
        #expect(try await cli("run-postgres", ["run", "--config", postgres], environment: environment) != 0)

        for (name, output) in outputs {
            #expect(!output.isEmpty, "\(name) printed nothing to search")
            for secret in Self.all {
                #expect(!output.contains(secret), "\(name) printed a secret:\n\(output)")
            }
        }
        #expect(outputs.first { $0.0 == "check-postgres" }?.1.contains("postgres://herald@127.0.0.1:1/herald") == true,
                "the URL is shown, without the password")
    }
}
