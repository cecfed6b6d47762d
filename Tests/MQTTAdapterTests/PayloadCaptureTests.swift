import Foundation
@testable import HeraldPluginAPI
import HeraldTestKit
import Testing

/// A payload is read in one pass that keeps only the mapped fields' values. Whatever the payload and the
/// mapping, that must decide exactly as parsing the whole document and reading it through the pointers
/// does: the same event, or the same rejection with the same reason, words and byte offset.
@Suite("Payload decoding reads only the mapped fields")
struct PayloadCaptureTests {
    @Test func theOnePassReaderDecidesAsTheWholeDocumentDoes() {
        var documents = JSONDocumentGenerator(seed: 18)
        var checked = (events: 0, rejections: 0, malformed: 0)
        for round in 0..<4_000 {
            let decoder = documents.decoder()
            let kind = documents.pick(PayloadKind.allCases)
            let bindings = PayloadBindings(chat: documents.pick([nil, "c1"]), user: documents.pick([nil, "u1"]))
            let text = documents.object()
            var payloads = [Array(text.utf8)]
            for _ in 0..<3 { payloads.append(documents.damaged(payloads[0])) }
            for payload in payloads {
                let expected: Result<ChatEvent, Rejection>
                switch JSONValue.parse(payload) {
                case .success(let document):
                    expected = decoder.decode(document: document, as: kind, bindings: bindings, receivedAt: Timestamp(milliseconds: 5))
                case .failure(let error):
                    guard String(validating: payload, as: UTF8.self) != nil else { continue }
                    expected = .failure(Rejection(.malformedJSON, "payload is not valid JSON: \(error.message) at byte \(error.offset)"))
                    checked.malformed += 1
                }
                let decoded = decoder.decode(payload, as: kind, bindings: bindings, receivedAt: Timestamp(milliseconds: 5))
                #expect(decoded == expected, "round \(round): \(String(decoding: payload, as: UTF8.self)) with \(decoder.mapping)")
                if case .success = decoded { checked.events += 1 } else { checked.rejections += 1 }
            }
        }
        // The generator reaches events, field rejections and syntax errors alike.
        #expect(checked.events > 200 && checked.rejections - checked.malformed > 1_000 && checked.malformed > 1_000, "\(checked)")
    }

    @Test func theOnePassReaderFindsWhatPointersFindInTheParsedDocument() {
        // Few keys and many objects: pointers meet repeated keys at every level.
        var documents = JSONDocumentGenerator(seed: 6901, nearKeyShare: 0.8, objectShare: 0.5)
        var found = 0
        for round in 0..<4_000 {
            let pointers = (0..<8).map { _ in JSONPointer(documents.pointer()) }
            let text = documents.object()
            for payload in [Array(text.utf8), documents.damaged(Array(text.utf8))] where String(validating: payload, as: UTF8.self) != nil {
                let captured: Result<[JSONValue?], JSONParser.Failure>
                do throws(JSONParser.Failure) {
                    captured = .success(try JSONParser.capture(payload, PointerTree(pointers)))
                } catch {
                    captured = .failure(error)
                }
                switch (JSONValue.parse(payload), captured) {
                case (.success(let document), .success(let values)):
                    #expect(values == pointers.map { document.value(at: $0) }, "round \(round): \(text) at \(pointers)")
                    found += values.count { $0 != nil }
                case (.failure(let expected), .failure(let error)):
                    #expect(error.offset == expected.offset && error.message == expected.message, "round \(round): \(payload)")
                default:
                    Issue.record("round \(round): the readers disagree on \(String(decoding: payload, as: UTF8.self))")
                }
            }
        }
        #expect(found > 4_000)
    }

    @Test func aRepeatedKeyReplacesWhatTheEarlierOneNamed() {
        var mapping = FieldMapping()
        mapping.from = "/m/author"
        let decoder = EventPayloadDecoder(mapping: mapping)
        let payload = #"{"m":{"author":"alice"},"id":"m1","body":"b","sent_at":1700000000000,"m":{"other":1}}"#
        #expect(decoder.decode(Array(payload.utf8), as: .messageReceived, bindings: PayloadBindings(chat: "c1"),
                               receivedAt: Timestamp(milliseconds: 0))
            == .failure(Rejection(.missingField, "field from (/m/author) is missing")))
    }

    @Test func keysAreComparedAsStringsNotAsBytes() {
        var mapping = FieldMapping()
        mapping.from = "/\u{212A}"  // KELVIN SIGN, canonically the letter K
        mapping.body = "/caf\u{E9}"
        let decoder = EventPayloadDecoder(mapping: mapping)
        let payload = "{\"K\":\"alice\",\"id\":\"m1\",\"cafe\u{301}\":\"b\",\"sent_at\":1700000000000}"
        #expect(decoder.decode(Array(payload.utf8), as: .messageReceived, bindings: PayloadBindings(chat: "c1"),
                               receivedAt: Timestamp(milliseconds: 0))
            == .success(.messageReceived(MessageReceived(chat: "c1", id: "m1", sender: "alice", body: "b",
                                                         sentAt: Timestamp(milliseconds: 1_700_000_000_000)))))
    }
}
