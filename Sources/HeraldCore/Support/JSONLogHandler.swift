public import HeraldPluginAPI
public import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Writes each log event as one JSON object on a line of its own (`log.format: json`), for log shippers
/// such as Vector, Fluent Bit or Promtail.
///
/// The object's keys come in this order: `time` (RFC 3339 in UTC, with milliseconds), `level`, `msg`,
/// `module` (the module that logged: swift-log's `source`), then the event's metadata with its keys sorted.
/// A metadata key that would shadow one of the first four is written as `meta.KEY`. Metadata values are
/// strings, arrays or objects, as swift-log holds them; an error passed to the logger adds `error.message`
/// and `error.type`.
public struct JSONLogHandler: LogHandler {
    /// The level below which `Logger` drops events before they reach the handler.
    public var logLevel: Logger.Level = .info
    /// Metadata every event of this handler carries.
    public var metadata: Logger.Metadata = [:]
    /// Metadata added to every event when it is logged (task-local values, for example).
    public var metadataProvider: Logger.MetadataProvider?
    private let output: LogLineOutput
    private let clock: any WallClock

    /// The keys every line starts with; metadata under one of these names is renamed `meta.NAME`.
    static let reservedKeys: Set<String> = ["time", "level", "msg", "module"]

    /// Creates a handler that hands each line to `output`, stamped with `clock`'s time.
    public init(output: LogLineOutput, clock: any WallClock) {
        self.output = output
        self.clock = clock
    }

    /// Reads or changes one metadata value of this handler.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes `event` as one line.
    public func log(event: LogEvent) {
        output.write(line(for: event))
    }

    /// The line `event` is written as, its newline included.
    func line(for event: LogEvent) -> [UInt8] {
        var fields = metadata
        if let provided = metadataProvider?.get() { fields.merge(provided) { _, provided in provided } }
        if let explicit = event.metadata { fields.merge(explicit) { _, explicit in explicit } }
        if let error = event.error {
            fields["error.message"] = "\(error)"
            fields["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128)
        bytes.append(UInt8(ascii: "{"))
        append(key: "time", value: .string(Self.rfc3339(clock.now())), to: &bytes, first: true)
        append(key: "level", value: .string(event.level.rawValue), to: &bytes)
        append(key: "msg", value: .string(event.message.description), to: &bytes)
        append(key: "module", value: .string(event.source), to: &bytes)
        for key in fields.keys.sorted() {
            guard let value = fields[key] else { continue }
            append(key: Self.reservedKeys.contains(key) ? "meta.\(key)" : key, value: Self.json(value), to: &bytes)
        }
        bytes.append(contentsOf: "}\n".utf8)
        return bytes
    }

    private func append(key: String, value: JSONValue, to bytes: inout [UInt8], first: Bool = false) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        bytes.append(contentsOf: JSONValue.string(key).jsonBytes)
        bytes.append(UInt8(ascii: ":"))
        bytes.append(contentsOf: value.jsonBytes)
    }

    /// A metadata value as JSON: text as a string, arrays and dictionaries as arrays and objects.
    static func json(_ value: Logger.MetadataValue) -> JSONValue {
        switch value {
        case .string(let text): .string(text)
        case .stringConvertible(let convertible): .string(convertible.description)
        case .array(let items): .array(items.map(json))
        case .dictionary(let entries): .object(entries.mapValues(json))
        }
    }

    /// `time` as RFC 3339 in UTC with milliseconds, such as `2026-11-27T20:40:12.345Z`. Whole numbers
    /// throughout: a `Date`'s floating-point seconds can print a millisecond less than the timestamp holds.
    static func rfc3339(_ time: Timestamp) -> String {
        let milliseconds = time.milliseconds
        let fraction = ((milliseconds % 1000) + 1000) % 1000
        var seconds = time_t((milliseconds - fraction) / 1000)
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return "\(milliseconds)ms" }
        func padded(_ value: some BinaryInteger, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return padded(parts.tm_year + 1900, 4) + "-" + padded(parts.tm_mon + 1, 2) + "-" + padded(parts.tm_mday, 2)
            + "T" + padded(parts.tm_hour, 2) + ":" + padded(parts.tm_min, 2) + ":" + padded(parts.tm_sec, 2)
            + "." + padded(fraction, 3) + "Z"
    }
}
