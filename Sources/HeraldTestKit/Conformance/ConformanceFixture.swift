import Foundation

/// One conformance case: a folder with `input` (the raw bytes an upstream delivers), optionally
/// `origin` (topic or other address, one line), and either `expected-events.json` (a JSON array of
/// events in ``EventDocument`` form) or `expected-rejection` (the rejection reason, e.g. `malformed_json`).
public struct ConformanceFixture: Sendable {
    /// The folder name.
    public var name: String
    /// Where the input is delivered (adapter-specific; empty when the adapter has one input).
    public var origin: String
    /// The raw input.
    public var input: [UInt8]
    /// Canonical JSON of the expected events, or `nil` for a rejection case.
    public var expectedEvents: [String]?
    /// The expected rejection reason.
    public var expectedRejection: String?

    /// Reads every case folder in `directory`, sorted by name.
    public static func load(from directory: URL) throws -> [ConformanceFixture] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        return try names.compactMap { name in
            let folder = directory.appendingPathComponent(name)
            guard let input = FileManager.default.contents(atPath: folder.appendingPathComponent("input").path) else { return nil }
            let origin = (try? String(contentsOf: folder.appendingPathComponent("origin"), encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            var fixture = ConformanceFixture(name: name, origin: origin, input: [UInt8](input), expectedEvents: nil, expectedRejection: nil)
            if let data = FileManager.default.contents(atPath: folder.appendingPathComponent("expected-events.json").path) {
                guard let events = try JSONSerialization.jsonObject(with: data) as? [Any] else {
                    throw TestKitError("\(name)/expected-events.json must be a JSON array")
                }
                fixture.expectedEvents = events.map { EventDocument.canonical($0) }
            } else if let reason = try? String(contentsOf: folder.appendingPathComponent("expected-rejection"), encoding: .utf8) {
                fixture.expectedRejection = reason.trimmingCharacters(in: .whitespacesAndNewlines)
            } else {
                throw TestKitError("\(name) needs expected-events.json or expected-rejection")
            }
            return fixture
        }
    }
}
