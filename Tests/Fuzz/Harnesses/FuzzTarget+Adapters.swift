import ExecAdapter
import HeraldAdapters
import HeraldCore
import HeraldPluginAPI
import RESTAdapter

/// The adapters' normalisers, built from configuration as `herald run` builds them.
enum FuzzAdapters {
    /// A source section's replay normaliser: the live normalisation of that adapter.
    static func normaliser(_ yaml: String) -> any ReplayNormaliser {
        do {
            let configuration = try ConfigurationLoader(registry: BuiltinAdapters.registry, environment: [:]).load(text: yaml, file: "fuzz.yaml")
            return try configuration.sources[0].settings.makeReplayNormaliser(name: configuration.sources[0].name)
        } catch {
            fatalError("the fuzz target's own configuration is refused: \(error)")
        }
    }

    static let mqtt = normaliser("""
        sources:
          - {name: broker, type: mqtt, url: "mqtt://127.0.0.1", client_id: fuzz, max_payload_bytes: 4096}
        """)
    static let webSocket = normaliser("""
        sources:
          - {name: stream, type: websocket, url: "ws://127.0.0.1/events", max_message_bytes: 4096}
        """)
    static let exec = normaliser("""
        sources:
          - {name: plugin, type: exec, command: [/bin/true]}
        """)
    static let rest: RESTPageReader = {
        do {
            let configuration = try ConfigurationLoader(registry: BuiltinAdapters.registry, environment: [:]).load(text: """
                sources:
                  - name: backend
                    type: rest
                    endpoints:
                      - {name: events, url: "http://127.0.0.1/events", items: /items, cursor: {from: field, pointer: /next}}
                """, file: "fuzz.yaml")
            guard let rest = configuration.sources[0].settings as? RESTSourceConfiguration else { fatalError("not a REST section") }
            return RESTPageReader(adapter: "backend", endpoint: rest.endpoints[0], maxItemBytes: 4096)
        } catch {
            fatalError("the fuzz target's own configuration is refused: \(error)")
        }
    }()

    /// Checks a normalised record: a rejection says why and keeps the raw bytes for the DLQ; an event
    /// keeps its identifiers within limits.
    static func check(_ record: SourceRecord, raw: [UInt8], _ input: [UInt8]) {
        switch record.outcome {
        case .rejected(let rejection):
            checkRejection(rejection, input)
            if record.raw != raw { violated("a rejected record does not keep its raw bytes for the dead-letter queue", input) }
        case .event(let event):
            checkIdentifiers(event, input)
        }
    }
}

extension FuzzTarget {
    /// The MQTT topic normaliser: the first byte is the topic's length, then the topic (any bytes, NUL and
    /// wildcards included), then the payload. A message's chat is its topic's `{chat}` level.
    static let mqttTopic = FuzzTarget(name: "mqtt-topic", summary: "the MQTT topic normaliser (templates, then the payload)") { input in
        guard let length = input.first.map({ Int($0) % 64 }), input.count > length else { return }
        let topic = String(decoding: input[1..<(1 + length)], as: UTF8.self)
        let payload = Array(input[(1 + length)...])
        let record = FuzzAdapters.mqtt.normalise(payload, provenance: Provenance(adapter: "broker", origin: topic, rawSize: payload.count,
                                                                                 receivedAt: Timestamp(milliseconds: 1_700_000_000_000)))
        FuzzAdapters.check(record, raw: payload, input)
        if case .event(let event) = record.outcome {
            let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
            guard levels.count == 3, levels[1] == Substring(event.chat.rawValue) || levels[0] == "users" else {
                violated("an event from topic \(topic) for chat \(event.chat)", input)
            }
            if case .messagesRead(let read) = event, levels[1] != Substring(read.reader.rawValue) {
                violated("a read on \(topic) acts for \(read.reader)", input)
            }
        }
    }

    /// The WebSocket source's frame normaliser.
    static let webSocket = FuzzTarget(name: "websocket", summary: "the WebSocket frame normaliser") { input in
        let record = FuzzAdapters.webSocket.normalise(input, provenance: Provenance(adapter: "stream", origin: "ws", rawSize: input.count,
                                                                                    receivedAt: Timestamp(milliseconds: 1_700_000_000_000)))
        FuzzAdapters.check(record, raw: input, input)
    }

    /// The REST page reader: a page is read into records, or refused with its URL and a reason.
    static let restPage = FuzzTarget(name: "rest-page", summary: "the REST page reader (items, cursors, Link headers)") { input in
        let link = input.first.map { $0 & 1 == 1 ? "<http://127.0.0.1/events?page=2>; rel=\"next\"" : nil } ?? nil
        switch FuzzAdapters.rest.read(body: input, url: "http://127.0.0.1/events", status: 200, linkHeader: link,
                                      receivedAt: Timestamp(milliseconds: 1_700_000_000_000)) {
        case .failure(let rejection):
            checkRejection(rejection, input)
        case .success(let page):
            if page.records.count != page.itemCount { violated("\(page.itemCount) items read into \(page.records.count) records", input) }
            for record in page.records {
                if case .event(let event) = record.outcome { checkIdentifiers(event, input) }
                if case .rejected(let rejection) = record.outcome { checkRejection(rejection, input) }
            }
        }
    }

    /// The exec plugin protocol: bytes split into bounded lines, each line a `{"seq":N,"event":{…}}`.
    static let execLine = FuzzTarget(name: "exec-line", summary: "the exec plugin line protocol (line splitting, then each line)") { input in
        var buffer = LineBuffer(maximumLineBytes: 512)
        let half = input.count / 2
        let lines = buffer.append(input[..<half]) + buffer.append(input[half...])
        for line in lines {
            switch line {
            case .overlong(let count):
                if count <= 512 { violated("a line of \(count) bytes reported overlong", input) }
            case .complete(let bytes):
                if bytes.count > 512 { violated("a line of \(bytes.count) bytes passed the 512-byte bound", input) }
                if bytes.contains(UInt8(ascii: "\n")) { violated("a line holds a newline", input) }
                let record = FuzzAdapters.exec.normalise(bytes, provenance: Provenance(adapter: "plugin", origin: "stdout", rawSize: bytes.count,
                                                                                       receivedAt: Timestamp(milliseconds: 1_700_000_000_000)))
                FuzzAdapters.check(record, raw: bytes, input)
            }
        }
    }
}
