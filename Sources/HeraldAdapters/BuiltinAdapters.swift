public import HeraldPluginAPI
import ExecAdapter
import MQTTAdapter

/// The one explicit list of adapters compiled into `herald`. Add a new family here.
public enum BuiltinAdapters {
    /// Every built-in source and sink type.
    public static var registry: AdapterRegistry {
        AdapterRegistry()
            .with(source: MQTTAdapters.source)
            .with(source: ExecAdapters.source)
            .with(sink: MQTTAdapters.sink)
    }
}
