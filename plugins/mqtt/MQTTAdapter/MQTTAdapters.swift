public import HeraldPluginAPI

/// The MQTT adapter family's descriptors, for the registry.
public enum MQTTAdapters {
    /// `type: mqtt` under `sources`.
    public static let source = SourceDescriptor(
        type: "mqtt", summary: "Subscribes to an MQTT broker (libmosquitto) with a persistent QoS 1 session; acks after commit.",
        options: sourceOptions, decode: { try MQTTSourceConfiguration(from: $0) })

    /// `type: mqtt` under `sinks`.
    public static let sink = SinkDescriptor(
        type: "mqtt", summary: "Publishes notifications, live messages, read receipts and badges to per-user MQTT topics.",
        options: sinkOptions, decode: { try MQTTSinkConfiguration(from: $0) })
}
