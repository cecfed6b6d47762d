import Foundation
import HeraldPluginAPI

/// A tailed event as JSON (one SSE `data:` line, one `--json` output line):
///
///     {"type":"message.received","chat":"c1","event":{"id":"m1","from":"alice","to":["bob"],"body":"hi","sent_at":…},
///      "source":"broker","origin":"chats/c1/messages","received_at":…,"committed_at":…,"commit_latency_ms":3,
///      "applied":true,"outputs":[{"kind":"notification","user":"bob","payload":{…}}]}
public struct TailEventDocument: Codable, Sendable, Hashable {
    /// Event kind.
    public var type: String
    /// Chat.
    public var chat: String
    /// The event's own fields.
    public var event: [String: JSONField]
    /// Source adapter.
    public var source: String
    /// Origin (topic, URL).
    public var origin: String
    /// What the transport said beside the bytes (MQTT 5 user properties, content type), when anything.
    public var attributes: [String: String]?
    /// Receive time, epoch ms.
    public var receivedAt: Int64
    /// Commit time, epoch ms.
    public var committedAt: Int64
    /// Receive → commit, ms.
    public var commitLatencyMs: Int64
    /// False for a duplicate.
    public var applied: Bool
    /// Outputs produced, when asked for.
    public var outputs: [OutputDocument]?

    /// An output as tailed.
    public struct OutputDocument: Codable, Sendable, Hashable {
        /// Output kind.
        public var kind: String
        /// Recipient.
        public var user: String
        /// The client-facing JSON, as text.
        public var payload: String
    }

    enum CodingKeys: String, CodingKey {
        case type, chat, event, source, origin, attributes, receivedAt = "received_at", committedAt = "committed_at"
        case commitLatencyMs = "commit_latency_ms", applied, outputs
    }

    /// Builds the document; bodies are replaced by `"<redacted>"` unless `showBody`.
    public init(_ record: TailRecord, includeOutputs: Bool, showBody: Bool) {
        type = record.event.kind.rawValue
        chat = record.event.chat.rawValue
        source = record.provenance.adapter
        origin = record.provenance.origin
        attributes = record.provenance.attributes.isEmpty ? nil : record.provenance.attributes
        receivedAt = record.provenance.receivedAt.milliseconds
        committedAt = record.committedAt.milliseconds
        commitLatencyMs = record.commitLatencyMilliseconds
        applied = record.applied
        switch record.event {
        case .messageReceived(let message):
            event = ["id": .string(message.id.rawValue), "from": .string(message.sender.rawValue),
                     "body": .string(showBody ? message.body : "<redacted>"), "sent_at": .number(message.sentAt.milliseconds)]
            if let recipients = message.recipients { event["to"] = .strings(recipients.map(\.rawValue)) }
        case .messagesRead(let read):
            event = ["reader": .string(read.reader.rawValue), "up_to": .string(read.upTo.rawValue), "read_at": .number(read.readAt.milliseconds)]
        case .chatCreated(let created):
            event = ["members": .strings(created.members.map(\.rawValue))]
        case .chatOpened(let focus), .chatClosed(let focus):
            event = ["user": .string(focus.user.rawValue)]
        }
        outputs = includeOutputs ? record.outputs.map { output in
            let shown = showBody ? output : Self.redacted(output)
            return OutputDocument(kind: output.kind.rawValue, user: output.recipient.rawValue,
                                  payload: String(decoding: OutputWireFormat.encode(shown), as: UTF8.self))
        } : nil
    }

    /// The output with message text replaced by `<redacted>`.
    static func redacted(_ output: Output) -> Output {
        switch output {
        case .notification(var notification):
            notification.preview = "<redacted>"
            return .notification(notification)
        case .liveMessage(var live):
            live.message.body = "<redacted>"
            return .liveMessage(live)
        case .readReceipt, .badge:
            return output
        }
    }

    /// The field as text (for one-line output).
    public func text(_ key: String) -> String? {
        switch event[key] {
        case .string(let value)?: value
        case .strings(let values)?: values.joined(separator: ",")
        case .number(let value)?: String(value)
        case nil: nil
        }
    }
}

/// A value in a tailed event's fields.
public enum JSONField: Codable, Sendable, Hashable {
    /// Text.
    case string(String)
    /// A list of texts.
    case strings([String])
    /// A whole number.
    case number(Int64)

    /// Decodes any of the three.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Int64.self) {
            self = .number(value)
        } else if let value = try? container.decode([String].self) {
            self = .strings(value)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    /// Encodes as the plain JSON value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .strings(let values): try container.encode(values)
        case .number(let value): try container.encode(value)
        }
    }
}
