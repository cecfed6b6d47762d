import CMosquitto

/// A code the broker sent back: a CONNACK return code (MQTT 3.1.1), an MQTT 5 reason code, or a
/// SUBACK's granted QoS. Codes of 0x80 and above are refusals; ``description`` gives the broker's
/// reason in words, e.g. "Not authorized".
public struct MosquittoReasonCode: Sendable, Hashable, CustomStringConvertible {
    /// The numeric code.
    public let value: Int32
    /// The protocol version the code belongs to (the words differ between versions).
    public let protocolVersion: MosquittoOptions.ProtocolVersion
    /// Whether this is the answer to CONNECT (MQTT 3.1.1 numbers those 1–5).
    let isConnack: Bool

    /// Creates a code.
    public init(_ value: Int32, protocolVersion: MosquittoOptions.ProtocolVersion, isConnack: Bool = false) {
        self.value = value
        self.protocolVersion = protocolVersion
        self.isConnack = isConnack
    }

    /// Whether the broker accepted (success codes are below 0x80; MQTT 3.1.1 refuses CONNECT with 1–5).
    public var isSuccess: Bool {
        if isConnack, protocolVersion == .v311 { return value == 0 }
        return value < 0x80
    }

    /// The code and the broker's reason in words.
    public var description: String {
        let words: String
        if protocolVersion == .v5 {
            words = String(cString: mosquitto_reason_string(value))
        } else if isConnack {
            words = String(cString: mosquitto_connack_string(value))
        } else {
            words = value < 0x80 ? "Granted QoS \(value)" : "Failure"
        }
        let hex = String(value, radix: 16, uppercase: true)
        return "0x" + (hex.count < 2 ? "0" + hex : hex) + " " + words
    }
}
