public import HeraldPluginAPI
import ExecAdapter
import HTTPIngestAdapter
import MQTTAdapter
import RESTAdapter
import WebSocketAdapter

/// The one explicit list of adapters compiled into `herald`. Add a new family here.
public enum BuiltinAdapters {
    /// Every built-in source and sink type.
    public static var registry: AdapterRegistry {
        AdapterRegistry()
            .with(source: MQTTAdapters.source)
            .with(source: ExecAdapters.source)
            .with(source: RESTAdapters.source)
            .with(source: WebSocketAdapters.source)
            .with(source: HTTPIngestAdapters.source)
            .with(sink: MQTTAdapters.sink)
            .with(sink: RESTAdapters.webhook)
    }
}
