import Foundation
@testable import HeraldCore
import HeraldPluginAPI
import HeraldTestKit
import Logging
import Testing

/// `log.format: json`: one JSON object per line, for log shippers.
@Suite("JSON log lines")
struct JSONLogTests {
    private struct FixedClock: WallClock {
        let time: Timestamp
        func now() -> Timestamp { time }
    }

    private struct Refusal: Error, CustomStringConvertible {
        var description: String { "the broker said no" }
    }

    private static func fields(of line: [UInt8]) throws -> [String: Any] {
        #expect(line.last == UInt8(ascii: "\n"))
        #expect(line.dropLast().allSatisfy { $0 != UInt8(ascii: "\n") }, "one event, one line")
        return try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
    }

    @Test func aLineHoldsTimeLevelMessageSourceAndTheMetadataEscaped() throws {
        // 2026-11-27T20:40:12.345Z
        var handler = JSONLogHandler(output: LogLineOutput(descriptor: -1), clock: FixedClock(time: Timestamp(milliseconds: 1_795_812_012_345)))
        handler.metadata = ["instance": "a", "broker": "overridden"]
        let event = LogEvent(level: .warning, message: "Sink delivery failed; \"retrying\".\nSecond line", metadata: [
            "broker": "127.0.0.1:1883", "level": "shadowed", "tabs": "a\tb\u{1}é", "hosts": ["h1", "h2"],
            "counts": ["sent": "3"],
        ], source: "MQTTAdapter", file: #fileID, function: #function, line: #line)
        let line = handler.line(for: event)
        let text = String(decoding: line, as: UTF8.self)
        #expect(text.hasPrefix(#"{"time":"2026-11-27T20:40:12.345Z","level":"warning","msg":"Sink delivery failed; \"retrying\".\nSecond line","module":"MQTTAdapter","#))

        let fields = try Self.fields(of: line)
        #expect(fields["msg"] as? String == "Sink delivery failed; \"retrying\".\nSecond line")
        #expect(fields["broker"] as? String == "127.0.0.1:1883", "the event's metadata wins over the handler's")
        #expect(fields["instance"] as? String == "a")
        #expect(fields["level"] as? String == "warning")
        #expect(fields["meta.level"] as? String == "shadowed")
        #expect(fields["tabs"] as? String == "a\tb\u{1}é")
        #expect(fields["hosts"] as? [String] == ["h1", "h2"])
        #expect(fields["counts"] as? [String: String] == ["sent": "3"])
        // Metadata keys follow the four fixed ones, sorted.
        let positions = ["module", "broker", "counts", "hosts", "instance", "meta.level", "tabs"]
            .map { text.range(of: "\"\($0)\":")?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil })
        #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted())
    }

    @Test func anErrorGivenToTheLoggerAddsItsMessageAndType() throws {
        let handler = JSONLogHandler(output: LogLineOutput(descriptor: -1), clock: FixedClock(time: Timestamp(milliseconds: 0)))
        let event = LogEvent(level: .error, message: "Publish failed.", error: Refusal(), metadata: nil, source: "MQTTAdapter",
                             file: #fileID, function: #function, line: #line)
        let fields = try Self.fields(of: handler.line(for: event))
        #expect(fields["time"] as? String == "1970-01-01T00:00:00.000Z")
        #expect(fields["error.message"] as? String == "the broker said no")
        #expect((fields["error.type"] as? String)?.hasSuffix("Refusal") == true)
    }

    @Test func timesAreUTCWithMillisecondsOnBothSidesOfTheEpoch() {
        #expect(JSONLogHandler.rfc3339(Timestamp(milliseconds: 1_795_812_012_005)) == "2026-11-27T20:40:12.005Z")
        #expect(JSONLogHandler.rfc3339(Timestamp(milliseconds: 951_782_400_000)) == "2000-02-29T00:00:00.000Z")
        #expect(JSONLogHandler.rfc3339(Timestamp(milliseconds: -1)) == "1969-12-31T23:59:59.999Z")
    }

    @Test func theOutputWritesWholeLinesToItsDescriptor() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("log.jsonl")
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let output = LogLineOutput(descriptor: descriptor)
        let lines = (0..<200).map { Array("{\"n\":\($0),\"pad\":\"\(String(repeating: "x", count: $0 * 7))\"}\n".utf8) }
        DispatchQueue.concurrentPerform(iterations: lines.count) { output.write(lines[$0]) }
        let written = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(Set(written.map(String.init)) == Set(lines.map { String(decoding: $0.dropLast(), as: UTF8.self) }))
    }

    @Test func aFormatOtherThanTextOrJSONIsAConfigErrorWithItsLine() async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("herald.yaml", "log:\n  level: info\n  format: xml\n")
        let check = try ChildProcess(executable: HeraldProcess.binary, arguments: ["check", "--config", path], logPath: directory.path("check.log"))
        #expect(try await check.waitForExit() == 78)
        #expect(check.output.contains("herald.yaml:3:"))
        #expect(check.output.contains("log.format"))
    }

    @Test func theErrorThatStopsTheGatewayIsAJSONLineToo() async throws {
        let directory = try TemporaryDirectory()
        let port = try Loopback.freePort()  // nothing listens there
        let path = try directory.write("herald.yaml", "store:\n  url: postgres://herald@127.0.0.1:\(port)/herald\nsources: []\nsinks: []\n")
        let run = try ChildProcess(executable: HeraldProcess.binary, arguments: ["run", "--config", path, "--log-format", "json"],
                                   logPath: directory.path("run.log"))
        #expect(try await run.waitForExit() == 1)
        let lines = run.output.split(separator: "\n", omittingEmptySubsequences: true)
        let objects = try lines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)")
        }
        let last = try #require(objects.last)
        #expect(last["level"] as? String == "critical")
        #expect(last["msg"] as? String == "Herald stopped on an error.")
        #expect((last["error"] as? String)?.contains("cannot connect to PostgreSQL at postgres://herald@127.0.0.1:\(port)/herald") == true)
    }

    @Test func theGatewayWritesEveryLineAsJSONThroughARunAndItsShutdown() async throws {
        let fixture = try await GatewayFixture()
        fixture.configuration.logExtra = "  format: json"
        try fixture.directory.write("herald.yaml", fixture.configuration.yaml)
        let herald = try await fixture.startHerald()
        let observer = try await TestMQTTClient(port: fixture.broker.port, subscriptions: ["users/#"])
        let client = try await TestMQTTClient(port: fixture.broker.port)
        try client.publish("chats/c1/messages", "{not json")
        try client.publish("chats/c1/messages", messageJSON(id: "m1", from: "alice", to: ["bob"]))
        try await observer.waitForMessages("bob's notification") { $0.contains { $0.topic == "users/bob/notifications" } }
        herald.child.signal(SIGTERM)
        #expect(try await herald.child.waitForExit() == 0)
        for peer in [observer, client] { try await peer.close() }

        let lines = fixture.logs.split(separator: "\n", omittingEmptySubsequences: true)
        var messages: [String] = []
        for line in lines {
            let fields = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)")
            let time = try #require(fields["time"] as? String)
            #expect(time.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "time \(time)")
            #expect(Logger.Level(rawValue: fields["level"] as? String ?? "") != nil)
            #expect(fields["module"] is String)
            messages.append(try #require(fields["msg"] as? String))
        }
        #expect(messages.contains("MQTT connected."))
        // The source's own metadata key `source` (the adapter instance) is kept as it is, beside `module`.
        let connected = try #require(lines.first { $0.contains("\"msg\":\"MQTT connected.\"") && $0.contains("\"source\":\"broker\"") })
        #expect(connected.contains("\"module\":\"MQTTAdapter\""))
        #expect(connected.contains("\"broker\":\"127.0.0.1:\(fixture.broker.port)\""))
        #expect(!fixture.logs.contains("meta."))
        #expect(lines.contains { $0.contains("\"level\":\"warning\"") || $0.contains("\"level\":\"error\"") },
                "the malformed message is logged as rejected")
        #expect(lines.count >= 4, "start-up, connections, the rejection and shutdown")
    }
}
