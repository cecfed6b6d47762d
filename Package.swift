// swift-tools-version:6.0
import PackageDescription

/// Settings every Herald target shares: Swift 6 mode (strict concurrency) plus the
/// upcoming features that make dependencies and existentials explicit.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "herald",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "herald", targets: ["herald"]),
        .library(name: "HeraldPluginAPI", targets: ["HeraldPluginAPI"]),
        .library(name: "HeraldTestKit", targets: ["HeraldTestKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket", from: "1.6.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // Pure value types: identifiers, events, outputs. No dependencies.
        .target(name: "HeraldModel", swiftSettings: strict),
        // The contract adapters compile against.
        .target(
            name: "HeraldPluginAPI",
            dependencies: [
                "HeraldModel",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strict
        ),
        // Router, store, badges, outbox, configuration and runtime. Knows no protocol.
        .target(
            name: "HeraldCore",
            dependencies: [
                "HeraldPluginAPI",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for binding statement parameters without copies (Statement+Binding.swift).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // The PostgreSQL chat store: the same set-based transaction as SQLite's, over postgres-nio.
        .target(
            name: "HeraldPostgres",
            dependencies: [
                "HeraldCore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict
        ),
        // The admin API: health, readiness, Prometheus metrics, the live tail stream, store queries.
        .target(
            name: "HeraldAdmin",
            dependencies: [
                "HeraldCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict
        ),
        // The one explicit list of built-in adapters.
        .target(
            name: "HeraldAdapters",
            dependencies: ["HeraldPluginAPI", "MQTTAdapter", "ExecAdapter", "RESTAdapter", "WebSocketAdapter", "HTTPIngestAdapter"],
            swiftSettings: strict
        ),
        // Helpers for adapter and integration tests: a real broker, a publisher, temp dirs.
        .target(
            name: "HeraldTestKit",
            dependencies: ["HeraldCore", "Mosquitto", .product(name: "MetricsTestKit", package: "swift-metrics")],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "herald",
            dependencies: [
                "HeraldCore", "HeraldPostgres", "HeraldAdapters", "HeraldAdmin",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "herald-bench",
            dependencies: [
                "HeraldTestKit", "MQTTAdapter", "HeraldPostgres",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            path: "Tests/Bench",
            exclude: ["python_bridge.py"],
            swiftSettings: strict
        ),

        // plugins/mqtt: the C library, its one Swift wrapper, the adapters.
        .systemLibrary(
            name: "CMosquitto",
            path: "plugins/mqtt/CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        .target(name: "Mosquitto", dependencies: ["CMosquitto"], path: "plugins/mqtt/Mosquitto", swiftSettings: strict),
        .target(
            name: "MQTTAdapter",
            dependencies: ["HeraldPluginAPI", "Mosquitto"],
            path: "plugins/mqtt/MQTTAdapter",
            swiftSettings: strict
        ),

        // plugins/exec: a long-lived child process speaking JSON lines with acks.
        .target(name: "ExecAdapter", dependencies: ["HeraldPluginAPI"], path: "plugins/exec/ExecAdapter", swiftSettings: strict),

        // plugins/common: TLS, auth headers, Retry-After and key pinning shared by the HTTP-based families.
        .target(
            name: "NetworkAdapterSupport",
            dependencies: [
                "HeraldPluginAPI",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "plugins/common/NetworkAdapterSupport",
            swiftSettings: strict
        ),
        // plugins/rest: the polling source and the signed webhook sink.
        .target(
            name: "RESTAdapter",
            dependencies: [
                "HeraldPluginAPI", "NetworkAdapterSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "plugins/rest/RESTAdapter",
            swiftSettings: strict
        ),
        // plugins/websocket: the ws:// and wss:// stream source.
        .target(
            name: "WebSocketAdapter",
            dependencies: [
                "HeraldPluginAPI", "NetworkAdapterSupport",
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "plugins/websocket/WebSocketAdapter",
            swiftSettings: strict
        ),
        // plugins/http: a server that backends POST events to, answered after commit.
        .target(
            name: "HTTPIngestAdapter",
            dependencies: [
                "HeraldPluginAPI", "NetworkAdapterSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "plugins/http/HTTPIngestAdapter",
            swiftSettings: strict
        ),

        .testTarget(
            name: "HeraldCoreTests",
            dependencies: [
                "HeraldCore", "HeraldPostgres", "HeraldTestKit",
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "herald-fuzz",
            dependencies: ["HeraldCore", "HeraldAdapters", "HeraldPluginAPI", "ExecAdapter", "RESTAdapter"],
            path: "Tests/Fuzz",
            exclude: ["Corpus"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "MQTTAdapterTests",
            dependencies: [
                "MQTTAdapter", "Mosquitto", "HeraldCore", "HeraldTestKit",
                .product(name: "Logging", package: "swift-log"), .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HTTPAdaptersTests",
            dependencies: ["RESTAdapter", "WebSocketAdapter", "HTTPIngestAdapter", "NetworkAdapterSupport", "HeraldCore", "HeraldTestKit"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HeraldIntegrationTests",
            dependencies: [
                "HeraldCore", "HeraldPostgres", "HeraldAdapters", "HeraldAdmin", "HeraldTestKit", "herald", "RESTAdapter",
                "HTTPIngestAdapter", "NetworkAdapterSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "GRDB", package: "GRDB.swift"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: strict
        ),
    ]
)

// Every target names every target of this package that it reaches, directly. Release builds inline code
// across modules (an initialiser, with its object's size, lands in the module that calls it), yet SwiftPM
// recompiles a module only when a *direct* dependency's .swiftmodule changes, and the compiler leaves a
// .swiftmodule untouched when its content did not change. Without this, adding a field to a class in
// HeraldCore leaves herald-bench (which reaches HeraldCore through HeraldTestKit) allocating the old size.
// docs/reliability.md#release-builds has the reproduction.
let targetsByName = Dictionary(uniqueKeysWithValues: package.targets.map { ($0.name, $0) })

func packageTargetNames(_ dependencies: [Target.Dependency], in targets: [String: Target]) -> [String] {
    dependencies.compactMap { dependency in
        switch dependency {
        case .targetItem(let name, _), .byNameItem(let name, _): targets[name] == nil ? nil : name
        default: nil
        }
    }
}

for target in package.targets {
    var reached: [String] = []
    var pending = packageTargetNames(target.dependencies, in: targetsByName)
    while let name = pending.popLast() {
        guard !reached.contains(name), let dependency = targetsByName[name] else { continue }
        reached.append(name)
        pending += packageTargetNames(dependency.dependencies, in: targetsByName)
    }
    let named = Set(packageTargetNames(target.dependencies, in: targetsByName))
    target.dependencies += reached.filter { !named.contains($0) }.sorted().map { .target(name: $0) }
}
