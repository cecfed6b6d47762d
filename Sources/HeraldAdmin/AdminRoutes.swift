import Foundation
import HeraldCore
import HeraldPluginAPI
import Hummingbird
import Prometheus

/// The admin API's handlers. Every handler that reads the store runs on ``GatewayParts/blocking``:
/// the store's calls block, and a request must never hold one of Swift's cooperative threads.
struct AdminRoutes: Sendable {
    let parts: GatewayParts
    let registry: PrometheusCollectorRegistry
    let state: AdminState

    func register(on router: Router<AdminRequestContext>) {
        router.get("/healthz") { _, _ in json(["status": "ok"]) }
        let blocking = parts.blocking
        router.get("/readyz") { _, _ in
            try await blocking.run {
                let (ready, body) = state.readiness()
                return json(body, status: ready ? .ok : .serviceUnavailable)
            }
        }
        router.get("/metrics") { _, _ in try await blocking.run { metrics() } }
        router.get("/v1/tail") { request, _ in try tail(request) }
        router.get("/v1/status") { _, _ in try await blocking.run { try status() } }
        router.get("/v1/users/:user/badge") { _, context in
            let user = UserID(try context.parameters.require("user"))
            let badge = try await blocking.run { try parts.store.badge(for: user) }
            return Response(status: .ok, headers: [.contentType: "application/json"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: OutputWireFormat.encode(.badge(badge)))))
        }
        router.get("/v1/chats/:chat/messages") { request, context in
            let chat = try context.parameters.require("chat")
            let limit = min(1000, max(1, request.uri.queryParameters.get("limit", as: Int.self) ?? 50))
            return try await blocking.run {
                let messages = try parts.store.recentMessages(chat: ChatID(chat), limit: limit).map { message -> [String: Any] in
                    ["id": message.id.rawValue, "from": message.sender.rawValue, "body": message.body, "sent_at": message.sentAt.milliseconds]
                }
                return json(["chat": chat, "messages": messages])
            }
        }
        router.get("/v1/dlq") { request, _ in
            let limit = min(1000, max(1, request.uri.queryParameters.get("limit", as: Int.self) ?? 100))
            return try await blocking.run {
                let letters = try parts.store.deadLetters(limit: limit, includeReplayed: false).map { letter -> [String: Any] in
                    ["id": letter.id, "adapter": letter.provenance.adapter, "origin": letter.provenance.origin,
                     "reason": letter.rejection.reason.rawValue, "detail": letter.rejection.detail, "size": letter.provenance.rawSize,
                     "received_at": letter.provenance.receivedAt.milliseconds]
                }
                return json(["dead_letters": letters])
            }
        }
    }

    private func metrics() -> Response {
        // Gauges that are cheaper to read on scrape than to maintain on every commit. Not `statistics()`:
        // on PostgreSQL that counts every stored message, a table that only grows.
        if let depth = try? parts.store.outboxDepth() {
            gauge("herald_outbox_depth", "Undelivered outputs").set(to: Double(depth.values.reduce(0, +)))
        }
        if let letters = try? parts.store.openDeadLetterCount() {
            gauge("herald_dead_letters", "Dead-lettered inputs not replayed").set(to: Double(letters))
        }
        if let oldest = try? parts.store.oldestOutputAge(now: parts.clock.now()) {
            gauge("herald_outbox_oldest_age_seconds", "Age of the oldest undelivered output").set(to: Double(oldest) / 1000)
        }
        for (name, health) in parts.sourceHealth {
            gauge("herald_source_connected", "1 while the source is connected", labels: [("adapter", name)]).set(to: health.snapshot.connected ? 1 : 0)
        }
        gauge("herald_build_info", "Herald build", labels: [("version", HeraldVersion.current), ("instance", parts.identity.id)]).set(to: 1)
        if let leases = try? parts.store.activeLeases() {
            let mine = Set(leases.filter { $0.holder == parts.identity.holder }.map(\.name))
            // The leases this configuration takes: each sink's delivery and each source that runs once per deployment.
            let singletons = parts.configuration.sources.filter { $0.settings.runsOncePerDeployment }
            let names = Set(singletons.map { "source:\($0.name)" } + parts.configuration.sinks.map { "outbox:\($0.name)" })
            for name in names.union(leases.map(\.name)).sorted() {
                gauge("herald_lease_held", "1 while this instance holds the lease (a sink's delivery, a singleton source)",
                      labels: [("lease", name)]).set(to: mine.contains(name) ? 1 : 0)
            }
        }
        return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
    }

    private func gauge(_ name: String, _ help: String, labels: [(String, String)] = []) -> Prometheus.Gauge {
        registry.makeGauge(descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help), labels: labels)
    }

    private func status() throws -> Response {
        let rates = state.ratePerSecond()
        let totals = parts.totals.snapshot()
        // Not `statistics()`: on PostgreSQL that counts every message, and a status call must stay cheap.
        let messages = try parts.store.messageCount()
        let outboxDepth = try parts.store.outboxDepth().values.reduce(0, +)
        let deadLetters = try parts.store.openDeadLetterCount()
        let since = parts.clock.now().adding(milliseconds: -60_000)
        let top = try parts.store.busiestChats(since: since, limit: 5).map { ["chat": $0.chat.rawValue, "messages": $0.count] as [String: Any] }
        let sources = try parts.sourceHealth.map { name, health -> [String: Any] in
            let snapshot = health.snapshot
            var entry: [String: Any] = ["name": name, "connected": snapshot.connected, "since": snapshot.since.milliseconds,
                                        "checkpoints": try parts.store.checkpoints(source: name), "standby": snapshot.standby]
            if let problem = snapshot.problem { entry["problem"] = problem }
            return entry
        }
        let leases = try parts.store.activeLeases().map { lease -> [String: Any] in
            ["name": lease.name, "holder": lease.holder, "expires_in_ms": lease.expiresInMilliseconds,
             "mine": lease.holder == parts.identity.holder]
        }
        return json([
            "version": HeraldVersion.current, "instance": parts.identity.id, "sources": sources, "leases": leases,
            "totals": ["applied": totals.applied, "duplicates": totals.duplicates, "dead_lettered": totals.deadLettered, "outputs": totals.outputs],
            "rates_per_s": ["applied": rates.applied, "dead_lettered": rates.deadLettered],
            "outbox_depth": outboxDepth, "dead_letters": deadLetters, "messages": messages.value, "messages_estimated": messages.estimated,
            "top_chats_last_minute": top, "tail_clients": parts.tap.subscriberCount,
            "store": parts.store.startupMetadata().mapValues { "\($0)" },
        ])
    }

    private func tail(_ request: Request) throws -> Response {
        let query = request.uri.queryParameters.map { (String($0.key), String($0.value)) }
        let filter: TailFilter
        do {
            filter = try TailFilter(query: query)
        } catch {
            return json(["error": error.message, "column": error.column], status: .badRequest)
        }
        let includeOutputs = request.uri.queryParameters.get("outputs") == "1"
        let showBody = request.uri.queryParameters.get("show_body") == "1"
        let limit = request.uri.queryParameters.get("limit", as: Int.self)
        let tap = parts.tap
        return Response(
            status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: ResponseBody { writer in
                let subscription = tap.subscribe(filter: filter)
                defer { subscription.cancel() }
                try await writer.write(ByteBuffer(string: ": herald tail\n\n"))
                var sent = 0
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                while let item = await subscription.next() {
                    switch item {
                    case .record(let record):
                        let document = TailEventDocument(record, includeOutputs: includeOutputs, showBody: showBody)
                        let data = try encoder.encode(document)
                        try await writer.write(ByteBuffer(string: "event: event\ndata: \(String(decoding: data, as: UTF8.self))\n\n"))
                        sent += 1
                        if let limit, sent >= limit { break }
                    case .dropped(let count):
                        try await writer.write(ByteBuffer(string: "event: dropped\ndata: {\"dropped\":\(count)}\n\n"))
                    case .idle:
                        try await writer.write(ByteBuffer(string: ": keepalive\n\n"))
                    }
                    if let limit, sent >= limit { break }
                }
                try await writer.finish(nil)
            })
    }
}

/// A JSON response from a dictionary.
func json(_ object: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
    return Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
}
