import Foundation
import HeraldPluginAPI

/// The JSON bodies the HTTP source answers with: per item on success, one line on refusal.
enum IngestResponse {
    /// One item's result.
    struct Item: Encodable {
        /// `accepted`, `duplicate` or `rejected`.
        var status: String
        /// Why it was rejected (a dead-letter reason such as `missing_field`).
        var reason: String?
        /// The rejection's detail.
        var detail: String?
    }

    /// A 202 answer: every item is durable, as an event or as a dead letter.
    struct Committed: Encodable {
        var accepted = 0
        var duplicates = 0
        var rejected = 0
        var results: [Item] = []
    }

    /// A refusal: nothing of the request was accepted.
    struct Refused: Encodable {
        var error: String
    }

    /// The 202 body for `records` and their commit outcomes.
    static func committed(_ records: [SourceRecord], outcomes: [IngestReport.RecordOutcome]) -> Data {
        var body = Committed()
        body.results.reserveCapacity(records.count)
        for (record, outcome) in zip(records, outcomes) {
            switch (outcome, record.outcome) {
            case (.duplicate, _):
                body.duplicates += 1
                body.results.append(Item(status: "duplicate"))
            case (_, .rejected(let rejection)):
                body.rejected += 1
                body.results.append(Item(status: "rejected", reason: rejection.reason.rawValue, detail: rejection.detail))
            case (_, .event):
                body.accepted += 1
                body.results.append(Item(status: "accepted"))
            }
        }
        return encode(body)
    }

    /// A refusal body.
    static func refused(_ message: String) -> Data { encode(Refused(error: message)) }

    private static func encode(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)) ?? Data(#"{"error":"response could not be encoded"}"#.utf8)
    }
}
