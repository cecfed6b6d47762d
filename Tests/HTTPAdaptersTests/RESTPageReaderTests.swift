import HeraldCore
import HeraldPluginAPI
@testable import RESTAdapter
import Testing

@Suite("REST pages: items, cursors, Link headers")
struct RESTPageReaderTests {
    static let loader = ConfigurationLoader(registry: AdapterRegistry().with(source: RESTAdapters.source).with(sink: RESTAdapters.webhook),
                                            environment: [:])

    static func endpoint(_ lines: String) throws -> RESTEndpoint {
        let configuration = try loader.load(text: """
            store: {path: /tmp/x.sqlite}
            sources:
              - name: backend
                type: rest
                endpoints:
                  - name: events
            \(lines)
            """, file: "t.yaml")
        return try #require((configuration.sources[0].settings as? RESTSourceConfiguration)?.endpoints.first)
    }

    static func read(_ endpoint: RESTEndpoint, _ body: String, link: String? = nil) -> Result<RESTPageReader.Page, Rejection> {
        RESTPageReader(adapter: "backend", endpoint: endpoint, maxItemBytes: 1024)
            .read(body: Array(body.utf8), url: "https://h/e?cursor=5", status: 200, linkHeader: link, receivedAt: Timestamp(milliseconds: 1))
    }

    @Test func itemsBecomeEventsOrDeadLettersAndTheCursorIsRead() throws {
        let endpoint = try Self.endpoint("        url: https://h/e\n        cursor: {from: field, pointer: /meta/next}")
        let page = try Self.read(endpoint, """
            {"items":[{"type":"chat.created","chat":"c1","members":["a","b"]},{"type":"message.received","chat":"c1"}],
             "meta":{"next":17}}
            """).get()
        #expect(page.next == "17")
        #expect(page.itemCount == 2)
        guard case .event(.chatCreated) = page.records[0].outcome else { Issue.record("\(page.records[0])"); return }
        guard case .rejected(let rejection) = page.records[1].outcome else { Issue.record("\(page.records[1])"); return }
        #expect(rejection.reason == .missingField)
        #expect(String(decoding: page.records[1].raw, as: UTF8.self) == #"{"chat":"c1","type":"message.received"}"#)
        #expect(page.records[1].provenance.origin == "https://h/e?cursor=5")
    }

    @Test func unreadablePagesAreRejectedWithURLAndStatus() throws {
        let endpoint = try Self.endpoint("        url: https://h/e")
        guard case .failure(let notJSON) = Self.read(endpoint, "<html>") else { Issue.record("accepted"); return }
        #expect(notJSON.reason == .unreadableResponse)
        #expect(notJSON.detail.hasPrefix("HTTP 200 from https://h/e?cursor=5: not JSON"))
        guard case .failure(let noItems) = Self.read(endpoint, #"{"data":[]}"#) else { Issue.record("accepted"); return }
        #expect(noItems.detail.contains("expected an array at \"/items\", found nothing"))
    }

    @Test func linkHeadersAreResolvedAgainstTheRequest() throws {
        let endpoint = try Self.endpoint("        url: https://h/e\n        items: \"\"\n        cursor: {from: link}")
        let page = try Self.read(endpoint, "[]", link: #"<https://h/e?page=1>; rel="prev", </e?page=3>; rel="next""#).get()
        #expect(page.next == "https://h/e?page=3")
        #expect(try Self.read(endpoint, "[]", link: #"<https://h/e?page=1>; rel="prev""#).get().next == nil)
    }

    @Test func theCursorReplacesItsQueryParameter() throws {
        let endpoint = try Self.endpoint("        url: \"https://h/e?limit=5&cursor=old\"\n        cursor: {from: field, pointer: /n, param: cursor}")
        #expect(endpoint.requestURL(cursor: nil) == "https://h/e?limit=5&cursor=old")
        #expect(endpoint.requestURL(cursor: "a b") == "https://h/e?limit=5&cursor=a%20b")
    }

    @Test func configurationErrorsNameTheKey() {
        func error(_ lines: String) -> String? {
            do { _ = try Self.endpoint(lines); return nil } catch { return "\(error)" }
        }
        #expect(error("        url: ftp://h/e")?.contains("sources[0].endpoints[0].url") == true)
        #expect(error("        url: https://h/e\n        cursor: {from: field}")?.contains("endpoints[0].cursor.pointer") == true)
        #expect(error("        url: https://h/e\n        jitter: 2")?.contains("endpoints[0].jitter") == true)
    }
}

@Suite("Dead-letter replay of REST items")
struct RESTReplayTests {
    @Test func aDeadLetteredItemReplaysWithItsEndpointsMapping() throws {
        let configuration = try RESTPageReaderTests.loader.load(text: """
            store: {path: /tmp/x.sqlite}
            sources:
              - name: backend
                type: rest
                endpoints:
                  - {name: plain, url: "https://h/plain"}
                  - {name: mapped, url: "https://h/mapped?x=1", kind: chat.created, mapping: {chat: /room, members: /people}}
            """, file: "t.yaml")
        let replay = try configuration.sources[0].settings.makeReplayNormaliser(name: "backend")
        let raw = Array(#"{"room":"c7","people":["a","b"]}"#.utf8)
        let record = replay.normalise(raw, provenance: Provenance(adapter: "backend", origin: "https://h/mapped?x=1&cursor=9",
                                                                  rawSize: raw.count, receivedAt: Timestamp(milliseconds: 3)))
        #expect(record.outcome == .event(.chatCreated(ChatCreated(chat: ChatID("c7"), members: [UserID("a"), UserID("b")]))))
        #expect(record.provenance.origin == "https://h/mapped?x=1&cursor=9")
    }
}
