import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import NetworkAdapterSupport
import NIOCore
import NIOHTTP1
import NIOSSL
import Testing

/// The HTTP source through the real `herald` binary and a real HTTP client on 127.0.0.1.
@Suite("HTTP ingest source")
struct HTTPSourceTests {
    @Test func singleBatchAndNDJSONPostsAreAnsweredPerItemOnceCommitted() async throws {
        let world = try HTTPIngestWorld()
        let herald = try await world.start()
        defer { herald.child.signal(SIGKILL) }

        let ready = try await fetch("http://127.0.0.1:\(world.adminPort)/readyz")
        #expect(ready.status == 200, "a listening HTTP source is ready: \(ready.body)")
        let single = try await world.post(httpMessage("m1"))
        #expect(single.status == 202 && single.statuses == ["accepted"], "\(single.text)")
        #expect(single.headers.first(name: "X-Request-ID")?.isEmpty == false)
        let again = try await world.post(httpMessage("m1"), headers: [("X-Request-ID", "client-42")])
        #expect(again.statuses == ["duplicate"] && again.headers.first(name: "X-Request-ID") == "client-42", "\(again.text)")

        let bad = #"{"type":"message.received","chat":"c1","id":"m9"}"#
        let batch = try await world.post("[\(httpMessage("m1")),\(httpMessage("m2")),\(bad)]")
        #expect(batch.status == 202 && batch.statuses == ["duplicate", "accepted", "rejected"], "\(batch.text)")
        #expect(batch.json["accepted"] as? Int == 1 && batch.json["duplicates"] as? Int == 1 && batch.json["rejected"] as? Int == 1)
        let rejection = (batch.json["results"] as? [[String: Any]])?.last
        #expect(rejection?["reason"] as? String == "missing_field", "\(batch.text)")

        let lines = "\(httpMessage("m3"))\n{\"type\":\"messages.read\",\"user\":\"bob\",\"chat\":\"c1\",\"up_to\":\"m2\"}\nnot json\n"
        let ndjson = try await world.post(lines, contentType: "application/x-ndjson")
        #expect(ndjson.status == 202 && ndjson.statuses == ["accepted", "accepted", "rejected"], "\(ndjson.text)")

        // Everything answered is durable: three messages, bob's read up to m2 (m3 unread), two dead letters with their bytes.
        let store = try world.store()
        #expect(try store.statistics().messages == 3)
        #expect(try store.badge(for: UserID("bob")).unread == 1)
        let letters = try store.deadLetters(limit: 10, includeReplayed: false)
        #expect(letters.map(\.rejection.reason) == [.missingField, .malformedJSON])
        #expect(letters.map { String(decoding: $0.raw, as: UTF8.self) }.last == "not json")
        #expect(letters.first?.provenance.origin.hasPrefix("POST /v1/events from 127.0.0.1:") == true, "\(letters.first?.provenance.origin ?? "")")
    }

    @Test func refusalsSayWhyAndAreCounted() async throws {
        let world = try HTTPIngestWorld(sourceOptions: "tokens: [old-token, secret-token]\nmax_body_bytes: 1024\nmax_events_per_request: 3")
        let herald = try await world.start()
        defer { herald.child.signal(SIGKILL) }

        #expect(try await world.post(httpMessage("m1"), token: "old-token").status == 202, "either token while they rotate")
        for token in [nil, "wrong-token"] {
            let refused = try await world.post(httpMessage("m2"), token: token)
            #expect(refused.status == 401 && refused.headers.first(name: "WWW-Authenticate") == "Bearer", "\(refused.text)")
        }
        let notJSON = try await world.post("garbage")
        #expect(notJSON.status == 400 && (notJSON.json["error"] as? String)?.hasPrefix("the body is not JSON") == true, "\(notJSON.text)")
        let form = try await world.post(httpMessage("m2"), contentType: "application/x-www-form-urlencoded")
        #expect(form.status == 415, "\(form.text)")
        let large = try await world.post("[" + Array(repeating: httpMessage("m2"), count: 20).joined(separator: ",") + "]")
        #expect(large.status == 413 && (large.json["error"] as? String)?.contains("max_body_bytes") == true, "\(large.text)")
        let many = try await world.post("[" + (1...4).map { httpMessage("n\($0)", to: []) }.joined(separator: ",") + "]")
        #expect(many.status == 413 && (many.json["error"] as? String)?.contains("max_events_per_request") == true, "\(many.text)")

        let store = try world.store()
        #expect(try store.statistics().messages == 1, "nothing refused was stored")
        let metrics = try await fetch("http://127.0.0.1:\(world.adminPort)/metrics").body
        for (status, count) in [("202", 1), ("401", 2), ("400", 1), ("415", 1), ("413", 2)] {
            #expect(metrics.contains(#"herald_http_requests_total{adapter="api",status="\#(status)"} \#(count)"#), "\(status) in:\n\(metrics)")
        }
        #expect(!herald.child.output.contains("wrong-token") && !herald.child.output.contains("secret-token"), "tokens are never logged")
    }

    /// Sends the head of a POST and the first `sent` bytes of `body`, and keeps the connection open.
    static func partialPost(_ world: HTTPIngestWorld, body: String, sent: Int) throws -> Int32 {
        try Loopback.connectAndSend(port: world.port, request: "POST /v1/events HTTP/1.1\r\nHost: localhost\r\n"
            + "Authorization: Bearer secret-token\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
            + String(body.utf8.prefix(sent))!)
    }

    /// Reads a raw connection until the server has answered and closed it or `limit` bytes arrived.
    static func readAnswer(_ descriptor: Int32, closeAfterAnswer: Bool = true) async -> String {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var response: [UInt8] = []
                var chunk = [UInt8](repeating: 0, count: 4096)
                while response.count < 65536 {
                    let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                    if count <= 0 { break }
                    response += chunk[0..<count]
                    if String(decoding: response, as: UTF8.self).contains("}") { break }
                }
                continuation.resume(returning: String(decoding: response, as: UTF8.self))
            }
        }
    }

    @Test func aFullServerAnswers429WithRetryAfterUntilTheSlotIsFree() async throws {
        let world = try HTTPIngestWorld(sourceOptions: "tokens: [secret-token]\nmax_in_flight: 1")
        let herald = try await world.start()
        defer { herald.child.signal(SIGKILL) }
        // A client that sends its head and part of its body holds the only slot until it sends the rest. If a
        // test request took the slot first, the slow one is the one refused: it is then opened again.
        let body = httpMessage("slow")
        var slow = try Self.partialPost(world, body: body, sent: 10)
        var refused: HTTPIngestWorld.Answer?
        try await eventually("a request refused while the slow one holds the slot") {
            var peek = [UInt8](repeating: 0, count: 64)
            if peek.withUnsafeMutableBytes({ recv(slow, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_PEEK)) }) > 0 {
                close(slow)
                slow = try Self.partialPost(world, body: body, sent: 10)
                return false
            }
            guard let answer = try? await world.post(httpMessage("m1")) else { return false }
            if answer.status == 429 { refused = answer }
            return answer.status == 429
        }
        defer { close(slow) }
        #expect(refused?.headers.first(name: "Retry-After") == "1", "\(refused?.text ?? "")")
        _ = Array(body.utf8.dropFirst(10)).withUnsafeBytes { send(slow, $0.baseAddress, $0.count, 0) }
        let answer = await Self.readAnswer(slow)
        #expect(answer.hasPrefix("HTTP/1.1 202"), "\(answer)")
        try await eventually("the slot to be free again") { (try? await world.post(httpMessage("m1")))?.status == 202 }
        #expect(try world.store().containsMessage(chat: ChatID("c1"), id: MessageID("slow")))
    }

    @Test func aStalledBodyIsAnswered408AndStoresNothingAndAnIdleConnectionIsClosed() async throws {
        let world = try HTTPIngestWorld(sourceOptions: "tokens: [secret-token]\nidle_timeout_s: 1")
        let herald = try await world.start()
        defer { herald.child.signal(SIGKILL) }
        let stalled = try Self.partialPost(world, body: httpMessage("stalled"), sent: 10)
        defer { close(stalled) }
        let answer = await Self.readAnswer(stalled)
        #expect(answer.hasPrefix("HTTP/1.1 408"), "\(answer)")
        #expect(try world.store().containsMessage(chat: ChatID("c1"), id: MessageID("stalled")) == false)
        #expect(try await world.post(httpMessage("m1")).status == 202, "the server goes on")
        // A connection that never sends a request is not held forever: the server closes it (a few seconds
        // after `idle_timeout_s`). A server that kept it would fail this after the 60-second receive timeout.
        let idle = try Loopback.connectAndSend(port: world.port, request: "")
        defer { close(idle) }
        #expect(await Self.closedByServer(idle, waitingAtMost: 60), "the idle connection is still open")
    }

    /// Waits for the server to close a connection that sends nothing: `true` when it did (end of stream or
    /// reset), `false` when `seconds` passed first or data arrived.
    static func closedByServer(_ descriptor: Int32, waitingAtMost seconds: Int) async -> Bool {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var byte: UInt8 = 0
                let count = recv(descriptor, &byte, 1, 0)
                continuation.resume(returning: count == 0 || (count < 0 && errno == ECONNRESET))
            }
        }
    }

    @Test func signedRequestsAreAcceptedAndStaleOrForgedOnesRefused() async throws {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
        let world = try HTTPIngestWorld(sourceOptions: "webhook_secret: \(secret)")
        let herald = try await world.start()
        defer { herald.child.signal(SIGKILL) }
        let signer = try #require(WebhookSigner(secret: secret))
        func signed(_ body: String, at stamp: Int64, signedBody: String? = nil) -> [(String, String)] {
            [("webhook-id", "msg_\(stamp)"), ("webhook-timestamp", "\(stamp)"),
             ("webhook-signature", signer.signature(id: "msg_\(stamp)", timestamp: stamp, body: Array((signedBody ?? body).utf8)))]
        }
        let now = Int64(Date().timeIntervalSince1970)
        let body = httpMessage("m1")
        #expect(try await world.post(body, token: nil, headers: signed(body, at: now)).status == 202)
        #expect(try await world.post(body, token: nil, headers: signed(body, at: now - 3600)).status == 401, "a replayed old request")
        #expect(try await world.post(body, token: nil, headers: signed(body, at: now, signedBody: httpMessage("m2"))).status == 401)
        #expect(try await world.post(body, token: "anything").status == 401)
    }

    @Test func tlsWithClientCertificatesAdmitsOnlyTrustedClients() async throws {
        let scratch = try TemporaryDirectory()
        let certificates = try await TestCertificates(in: scratch)
        let world = try HTTPIngestWorld(sourceOptions: """
            tokens: [secret-token]
            tls: {cert_file: \(certificates.serverCertFile), key_file: \(certificates.serverKeyFile), client_ca_file: \(certificates.caFile)}
            """, scheme: "https")
        let herald = try await world.start()
        defer { herald.child.signal(SIGKILL) }
        func client(certificate: Bool) throws -> HTTPClient {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificates.caFile))
            if certificate {
                tls.certificateChain = try NIOSSLCertificate.fromPEMFile(certificates.clientCertFile).map { .certificate($0) }
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: certificates.clientKeyFile, format: .pem))
            }
            return HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        }
        let trusted = try client(certificate: true)
        let anonymous = try client(certificate: false)
        let accepted = try await world.post(httpMessage("m1"), client: trusted).status
        let refusal: (any Error)? = await {
            do {
                _ = try await world.post(httpMessage("m2"), client: anonymous)
                return nil
            } catch {
                return error
            }
        }()
        try await trusted.shutdown()
        try await anonymous.shutdown()
        #expect(accepted == 202)
        #expect(refusal != nil, "a client without a certificate fails the handshake")
        #expect(try world.store().statistics().messages == 1)
    }
}
