import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization

/// One test's world for the HTTP source: a temporary directory, a config with an `http` source on a
/// free port (plus the admin API), and the real `herald` binary serving it.
final class HTTPIngestWorld: Sendable {
    let directory: TemporaryDirectory
    let port: Int
    let adminPort: Int
    let configPath: String
    let storePath: String
    let scheme: String
    private let runs = RunCounter()

    /// `sourceOptions` are YAML lines under the source (indented by four spaces).
    init(sourceOptions: String = "tokens: [secret-token]", scheme: String = "http") throws {
        directory = try TemporaryDirectory(prefix: "herald-http")
        port = try Loopback.freePort()
        adminPort = try Loopback.freePort()
        storePath = directory.path("store.sqlite")
        self.scheme = scheme
        let options = sourceOptions.split(separator: "\n").map { "    \($0)" }.joined(separator: "\n")
        configPath = try directory.write("herald.yaml", """
            store:
              path: \(storePath)
              durability: normal
            admin:
              listen: 127.0.0.1:\(adminPort)
              reconnect_budget_s: 0
            sources:
              - name: api
                type: http
                listen: 127.0.0.1:\(port)
            \(options)

            """)
    }

    var url: String { "\(scheme)://localhost:\(port)/v1/events" }

    /// Starts `herald run` and waits until the source listens.
    @discardableResult
    func start() async throws -> HeraldProcess {
        let process = try HeraldProcess(configPath: configPath, logPath: directory.path("herald-\(runs.next()).log"))
        try await eventually("the HTTP source to listen on \(port)") {
            guard process.child.isRunning else { throw TestKitError("herald exited:\n\(process.child.output)") }
            return process.child.output.contains("HTTP source listening.")
        }
        return process
    }

    /// The store the gateway writes.
    func store() throws -> SQLiteChatStore { try SQLiteChatStore(path: storePath, durability: .normal) }

    /// One POST to this world's source: the status, the JSON answer and the headers.
    func post(_ body: String, contentType: String? = "application/json", token: String? = "secret-token",
              headers extra: [(String, String)] = [], client: HTTPClient = .shared) async throws -> Answer {
        try await Self.post(body, to: url, contentType: contentType, token: token, headers: extra, client: client)
    }

    /// One POST to `url`.
    static func post(_ body: String, to url: String, contentType: String? = "application/json", token: String?,
                     headers extra: [(String, String)] = [], client: HTTPClient = .shared) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in extra { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await client.execute(request, timeout: .seconds(30))
        let text = String(buffer: try await response.body.collect(upTo: 16 << 20))
        let json = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
        return Answer(status: response.status.code, json: json, text: text, headers: response.headers)
    }

    /// What the source answered.
    struct Answer: @unchecked Sendable {
        var status: UInt
        var json: [String: Any]
        var text: String
        var headers: HTTPHeaders

        /// The per-item statuses of a 202.
        var statuses: [String] { (json["results"] as? [[String: Any]] ?? []).compactMap { $0["status"] as? String } }
    }
}

/// A message event in the self-describing form the HTTP source reads.
func httpMessage(_ id: String, chat: String = "c1", from: String = "alice", to: [String] = ["bob"]) -> String {
    let recipients = to.map { "\"\($0)\"" }.joined(separator: ",")
    return #"{"type":"message.received","chat":"\#(chat)","id":"\#(id)","from":"\#(from)","to":[\#(recipients)],"body":"hi","sent_at":1763800000000}"#
}

/// A thread-safe counter for numbering runs.
final class RunCounter: Sendable {
    private let value = Mutex(0)
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}
