import Foundation
public import HeraldPluginAPI

/// Turns one fetched page into records and the next cursor. Pure: no I/O, so it is unit-tested and
/// reused to replay dead-lettered items.
public struct RESTPageReader: Sendable {
    /// The source's name (provenance).
    let adapter: String
    /// The endpoint the page came from.
    let endpoint: RESTEndpoint
    /// The event decoder (limits, mapping, times).
    let decoder: EventPayloadDecoder

    /// What a page yielded.
    public struct Page: Sendable {
        /// One record per item, in page order.
        public var records: [SourceRecord]
        /// The next cursor the page names, if any.
        public var next: String?
        /// How many items the page held.
        public var itemCount: Int
    }

    /// Creates a reader.
    public init(adapter: String, endpoint: RESTEndpoint, maxItemBytes: Int) {
        self.adapter = adapter
        self.endpoint = endpoint
        self.decoder = EventPayloadDecoder(maxPayloadBytes: maxItemBytes, mapping: endpoint.mapping, timeFormat: endpoint.timeFormat)
    }

    /// Reads a 2xx page fetched from `url`. A page that is not the configured shape is a rejection
    /// (for the dead-letter queue, with the URL and status).
    public func read(body: [UInt8], url: String, status: Int, linkHeader: String?, receivedAt: Timestamp) -> Result<Page, Rejection> {
        let document: JSONValue
        switch JSONValue.parse(body) {
        case .success(let value): document = value
        case .failure(let error):
            return .failure(Rejection(.unreadableResponse, "HTTP \(status) from \(url): not JSON (\(error.message) at byte \(error.offset))"))
        }
        guard case .array(let items)? = document.value(at: endpoint.items) else {
            let found = document.value(at: endpoint.items)?.typeName ?? "nothing"
            return .failure(Rejection(.unreadableResponse,
                                      "HTTP \(status) from \(url): expected an array at \"\(endpoint.items)\", found \(found)"))
        }
        let records = items.map { item in record(for: item, origin: url, receivedAt: receivedAt) }
        return .success(Page(records: records, next: nextCursor(document: document, linkHeader: linkHeader, requestURL: url),
                             itemCount: items.count))
    }

    /// Normalises one item.
    func record(for item: JSONValue, origin: String, receivedAt: Timestamp) -> SourceRecord {
        let raw = item.jsonBytes
        let provenance = Provenance(adapter: adapter, origin: origin, rawSize: raw.count, receivedAt: receivedAt)
        if raw.count > decoder.maxPayloadBytes {
            return SourceRecord(provenance: provenance, outcome: .rejected(Rejection(
                .oversize, "item is \(raw.count) bytes, the limit is \(decoder.maxPayloadBytes)")), raw: raw)
        }
        switch decoder.decodeFeedEvent(document: item, as: endpoint.kind, receivedAt: receivedAt) {
        case .success(let event): return SourceRecord(provenance: provenance, outcome: .event(event), raw: [])
        case .failure(let rejection): return SourceRecord(provenance: provenance, outcome: .rejected(rejection), raw: raw)
        }
    }

    private func nextCursor(document: JSONValue, linkHeader: String?, requestURL: String) -> String? {
        guard let cursor = endpoint.cursor else { return nil }
        switch cursor.from {
        case .field:
            switch document.value(at: cursor.pointer ?? "") {
            case .string(let value)? where !value.isEmpty: return value
            case .number(let value)?: return value == value.rounded() ? String(Int64(value)) : String(value)
            default: return nil
            }
        case .link:
            guard let linkHeader, let target = Self.nextLink(in: linkHeader) else { return nil }
            return URL(string: target, relativeTo: URL(string: requestURL))?.absoluteString ?? target
        }
    }

    /// The target of `rel="next"` in an RFC 8288 `Link` header.
    static func nextLink(in header: String) -> String? {
        for part in header.split(separator: ",") {
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let target = pieces.first, target.hasPrefix("<"), target.hasSuffix(">") else { continue }
            let isNext = pieces.dropFirst().contains { parameter in
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2, pair[0].lowercased() == "rel" else { return false }
                return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")).split(separator: " ").contains("next")
            }
            if isNext { return String(target.dropFirst().dropLast()) }
        }
        return nil
    }
}

/// Replays a dead-lettered REST item with the configuration of the endpoint whose URL it came from.
struct RESTReplayNormaliser: ReplayNormaliser {
    let readers: [RESTPageReader]

    func normalise(_ raw: [UInt8], provenance: Provenance) -> SourceRecord {
        let reader = readers.first { provenance.origin.hasPrefix(baseURL($0.endpoint.url)) } ?? readers[0]
        guard case .success(let item) = JSONValue.parse(raw) else {
            return SourceRecord(provenance: provenance, outcome: .rejected(Rejection(.malformedJSON, "item is not JSON")), raw: raw)
        }
        var record = reader.record(for: item, origin: provenance.origin, receivedAt: provenance.receivedAt)
        record.provenance = provenance
        return record
    }

    private func baseURL(_ url: String) -> String { String(url.prefix { $0 != "?" }) }
}
