// What an adapter needs comes with `import HeraldPluginAPI`: the model, logging and metrics.
@_exported import CoreMetrics
@_exported import HeraldModel
@_exported import Logging
