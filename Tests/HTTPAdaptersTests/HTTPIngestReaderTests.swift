import Foundation
import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
@testable import HTTPIngestAdapter
import NetworkAdapterSupport
import Synchronization
import Testing

@Suite("HTTP source: bodies, credentials and shared commits")
struct HTTPIngestReaderTests {
    static let reader = HTTPBodyReader(adapter: "api", kind: .fromPayload, maxEvents: 3,
                                       decoder: EventPayloadDecoder(maxPayloadBytes: 200))
    static let message = #"{"type":"message.received","chat":"c1","id":"m1","from":"alice","body":"hi","sent_at":1763800000000}"#
    static let read = #"{"type":"messages.read","user":"bob","chat":"c1","up_to":"m1","read_at":1763800005000}"#

    static func outcomes(_ body: String, _ framing: HTTPBodyReader.Framing) -> Result<[SourceRecord.Outcome], HTTPBodyReader.Refusal> {
        reader.read(Array(body.utf8), framing: framing, origin: "POST /v1/events", receivedAt: Timestamp(milliseconds: 1))
            .map { $0.map(\.outcome) }
    }

    @Test func anObjectIsOneEventAndAnArrayIsABatch() throws {
        let one = try Self.outcomes(Self.message, .json).get()
        #expect(one.count == 1)
        guard case .event(.messageReceived(let message)) = one[0] else { Issue.record("\(one)"); return }
        #expect(message.id.rawValue == "m1" && message.sender.rawValue == "alice")
        let batch = try Self.outcomes("[\(Self.message),\(Self.read)]", .json).get()
        guard case .event(.messagesRead(let read)) = batch[1] else { Issue.record("\(batch)"); return }
        #expect(read.reader.rawValue == "bob", "a backend feed names the reader in the event")
    }

    @Test func ndjsonIsOneEventPerLineAndABadLineIsItsOwnRejection() throws {
        let records = try Self.reader.read(Array("\(Self.message)\r\n\n{oops\n\(Self.read)\n".utf8), framing: .ndjson,
                                           origin: "o", receivedAt: Timestamp(milliseconds: 1)).get()
        #expect(records.count == 3, "blank lines are skipped")
        guard case .rejected(let rejection) = records[1].outcome else { Issue.record("\(records)"); return }
        #expect(rejection.reason == .malformedJSON && records[1].raw == Array("{oops".utf8), "the line's own bytes are kept")
        #expect(records[0].raw.isEmpty && records[0].provenance.rawSize == Self.message.utf8.count)
    }

    @Test func itemsFailOnTheirOwnAndWholeBodiesAreRefusedWithAStatus() throws {
        let mixed = try Self.outcomes(#"[{"type":"message.received","chat":"c1"}, 7, {"type":"nope","chat":"c1"}]"#, .json).get()
        let reasons = mixed.map { outcome -> String in if case .rejected(let rejection) = outcome { rejection.reason.rawValue } else { "event" } }
        #expect(reasons == ["missing_field", "malformed_json", "unknown_event_kind"])
        let oversize = try Self.outcomes(#"{"type":"message.received","chat":"c1","id":"m1","from":"a","sent_at":1,"body":"\#(String(repeating: "x", count: 300))"}"#, .json).get()
        guard case .rejected(let rejection) = oversize[0] else { Issue.record("\(oversize)"); return }
        #expect(rejection.reason == .oversize)
        for (body, framing, status) in [("garbage", HTTPBodyReader.Framing.json, 400), ("\"text\"", .json, 400), ("[]", .json, 400),
                                        ("[1,2,3,4]", .json, 413), ("1\n2\n3\n4", .ndjson, 413), ("\n \n", .ndjson, 400)] {
            guard case .failure(let refusal) = Self.outcomes(body, framing) else { Issue.record("\(body) was not refused"); continue }
            #expect(refusal.status == status, "\(body): \(refusal)")
        }
    }

    @Test func theContentTypeChoosesTheFraming() {
        #expect(HTTPBodyReader.Framing(contentType: nil) == .json)
        #expect(HTTPBodyReader.Framing(contentType: "application/json; charset=utf-8") == .json)
        #expect(HTTPBodyReader.Framing(contentType: "Application/X-NDJSON") == .ndjson)
        #expect(HTTPBodyReader.Framing(contentType: "text/plain") == nil)
        #expect(HTTPBodyReader.Framing(contentType: "application/x-www-form-urlencoded") == nil)
    }

    @Test func tokensAndSignaturesAreChecked() throws {
        let signer = try #require(WebhookSigner(secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
        let authenticator = RequestAuthenticator(tokens: [Secret("old"), Secret("new")], signer: signer, toleranceMilliseconds: 300_000)
        func token(_ header: String?) -> Result<Void, RequestAuthenticator.Failure>? {
            authenticator.checkToken(.init(authorization: header))
        }
        #expect(token(nil) == nil)
        #expect(token("Basic abc") == nil)
        #expect((try? token("Bearer new")?.get()) != nil)
        #expect((try? token("bearer old")?.get()) != nil, "either token, while they rotate")
        #expect(token("Bearer newer").map { if case .failure(.wrongToken) = $0 { true } else { false } } == true)

        let body = Array(Self.message.utf8)
        let now = Timestamp(milliseconds: 1_763_800_000_000)
        let stamp = now.milliseconds / 1000
        let signed = RequestAuthenticator.Credentials(webhookID: "msg_1", webhookTimestamp: "\(stamp)",
                                                      webhookSignature: signer.signature(id: "msg_1", timestamp: stamp, body: body))
        #expect((try? authenticator.checkSignature(signed, body: body, now: now).get()) != nil)
        func failure(_ result: Result<Void, RequestAuthenticator.Failure>) -> RequestAuthenticator.Failure? {
            if case .failure(let failure) = result { failure } else { nil }
        }
        #expect(failure(authenticator.checkSignature(signed, body: body + [0x20], now: now)) == .badSignature)
        #expect(failure(authenticator.checkSignature(signed, body: body, now: Timestamp(milliseconds: now.milliseconds + 301_000))) == .stale)
        var unsigned = signed
        unsigned.webhookID = nil
        #expect(failure(authenticator.checkSignature(unsigned, body: body, now: now)) == .unsigned)
    }

    @Test func concurrentRequestsShareACommitAndEachGetsItsOwnOutcomes() async throws {
        let ingest = CountingIngest()
        let committer = GroupCommitter(maxBatch: 100)
        // Hold the first commit so the next requests queue behind it and go in one commit together.
        ingest.recorder.holdNextCommit()
        let running = Task { await committer.run(ingest: AsyncIngest(ingest, label: "test")) }
        func records(_ count: Int, rejected: Bool = false) -> [SourceRecord] {
            (0..<count).map { index in
                let provenance = Provenance(adapter: "api", origin: "o", rawSize: 1, receivedAt: Timestamp(milliseconds: 1))
                let outcome: SourceRecord.Outcome = rejected ? .rejected(Rejection(.malformedJSON, "x")) : .event(.chatOpened(
                    ChatFocus(user: UserID("u\(index)"), chat: ChatID("c"))))
                return SourceRecord(provenance: provenance, outcome: outcome, raw: [1])
            }
        }
        let first = Task { await committer.commit(records(1)) }
        try await eventually("the first commit to be held") { ingest.recorder.isHoldingCommit }
        let second = Task { await committer.commit(records(2)) }
        let third = Task { await committer.commit(records(1, rejected: true)) }
        try await eventually("two requests queued behind the held commit") { committer.queuedRequests == 2 }
        ingest.recorder.releaseHeldCommit()
        #expect(try await first.value.get() == [.applied])
        #expect(try await second.value.get() == [.applied, .applied])
        #expect(try await third.value.get() == [.deadLettered])
        #expect(ingest.batches == [1, 3], "the two queued requests were committed together")
        ingest.recorder.failNextCommits(1)
        guard case .failure = await committer.commit(records(1)) else { Issue.record("a failed commit must fail its requests"); return }
        committer.finish()
        await running.value
        #expect(ingest.recorder.records.count == 4)
    }
}

/// A recording ingest that also remembers the size of each commit.
final class CountingIngest: IngestHandle {
    let recorder = RecordingIngest()
    private let sizes = Mutex<[Int]>([])

    func commit(_ records: [SourceRecord], checkpoints: [SourceCheckpoint]) throws(IngestError) -> IngestReport {
        let report = try recorder.commit(records, checkpoints: checkpoints)
        sizes.withLock { $0.append(records.count) }
        return report
    }

    func checkpoint(source: String, key: String) throws(IngestError) -> String? { try recorder.checkpoint(source: source, key: key) }

    /// The record count of each successful commit, in order.
    var batches: [Int] { sizes.withLock { $0 } }
}
