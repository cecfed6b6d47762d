import AsyncHTTPClient
import Foundation
import HeraldPluginAPI
import NetworkAdapterSupport
import NIOCore
import NIOHTTP1
import NIOSSL

/// Polls one endpoint: follows pages until the cursor stops moving, commits each page with the
/// endpoint's checkpoints, then waits for the interval (with jitter), or for `Retry-After`, or backs off.
struct RESTPoller: Sendable {
    let source: String
    let reader: RESTPageReader
    let configuration: RESTSourceConfiguration
    let client: HTTPClient
    let tlsConfiguration: TLSConfiguration
    let ingest: AsyncIngest
    let context: SourceContext
    let health: @Sendable (Bool) -> Void

    var endpoint: RESTEndpoint { reader.endpoint }

    /// The endpoint's stored position: the cursor and the validators of the page at that cursor.
    struct Position: Equatable {
        var cursor: String?
        var etag: String?
        var lastModified: String?
    }

    /// Why a poll stopped early.
    enum PollFailure: Error, CustomStringConvertible {
        case status(Int, url: String, retryAfter: Double?)
        case transport(String, url: String)
        case unreadable
        case commit(IngestError)
        case pins(String)

        var retryAfter: Double? { if case .status(_, _, let seconds) = self { seconds } else { nil } }
        var description: String {
            switch self {
            case .status(let status, let url, _): "HTTP \(status) from \(url)"
            case .transport(let error, let url): "request to \(url) failed: \(error)"
            case .unreadable: "page dead-lettered"
            case .commit(let error): "\(error)"
            case .pins(let error): error
            }
        }
    }

    func run() async {
        var backoff = context.reconnect
        var lastUnreadable: [UInt8]?
        var reachable = false
        while !Task.isCancelled, !context.shutdown.isTriggered {
            let delay: Double
            do {
                try await poll(lastUnreadable: &lastUnreadable)
                backoff.reset()
                health(true)
                // A "connect" for a polled endpoint: the first good poll, and the first after failures.
                if !reachable { context.metrics.connects.increment() }
                reachable = true
                delay = endpoint.intervalSeconds * (1 + endpoint.jitter * Double.random(in: -1...1))
            } catch {
                health(false)
                reachable = false
                context.metrics.connectionFailures.increment()
                delay = error.retryAfter ?? backoff.nextDelaySeconds()
                context.logger.warning("Poll failed; retrying.", metadata: [
                    "endpoint": "\(endpoint.name)", "error": "\(error)", "retry_in_s": "\(String(format: "%.2f", delay))",
                ])
            }
            await context.shutdown.wait(timeout: .milliseconds(Int64(max(delay, 0) * 1000)))
        }
    }

    /// A fetched response.
    typealias Fetched = (status: Int, headers: HTTPHeaders, body: [UInt8])

    /// One poll: pages until the cursor stops moving. While a page commits, the next one is already being
    /// fetched (its URL is known once the page is read), so the network and the store overlap; the next
    /// page is used only if the commit succeeded.
    func poll(lastUnreadable: inout [UInt8]?) async throws(PollFailure) {
        var position = try await loadPosition()
        try await checkPins()
        var url = endpoint.requestURL(cursor: position.cursor)
        var fetched = try await fetch(url, position: position)
        for _ in 0..<configuration.maxPagesPerPoll {
            guard !Task.isCancelled, !context.shutdown.isTriggered else { return }
            let (status, headers, body) = fetched
            if status == 304 { return }
            guard (200..<300).contains(status) else {
                throw .status(status, url: url, retryAfter: [429, 503].contains(status) ? RetryAfter.seconds(headers.first(name: "Retry-After")) : nil)
            }
            context.metrics.bytes.increment(by: body.count)
            let receivedAt = context.clock.now()
            switch reader.read(body: body, url: url, status: status, linkHeader: headers.first(name: "Link"), receivedAt: receivedAt) {
            case .failure(let rejection):
                // The same unreadable page again (the cursor cannot move past it) is dead-lettered once.
                if lastUnreadable != body {
                    let provenance = Provenance(adapter: source, origin: url, rawSize: body.count, receivedAt: receivedAt)
                    try await commit([SourceRecord(provenance: provenance, outcome: .rejected(rejection), raw: body)], checkpoints: [])
                    lastUnreadable = body
                }
                throw .unreadable
            case .success(let page):
                lastUnreadable = nil
                context.metrics.received.increment(by: page.itemCount)
                var next = position
                let moved = page.next.map { $0 != position.cursor } ?? false
                if moved {
                    next = Position(cursor: page.next, etag: nil, lastModified: nil)
                } else {
                    next.etag = headers.first(name: "ETag")
                    next.lastModified = headers.first(name: "Last-Modified")
                }
                let more = moved && page.itemCount > 0
                let nextURL = endpoint.requestURL(cursor: next.cursor)
                let prefetch = more ? Task { [next] () async -> Result<Fetched, PollFailure> in
                    do throws(PollFailure) { return .success(try await fetch(nextURL, position: next)) } catch { return .failure(error) }
                } : nil
                do {
                    try await commit(page.records, checkpoints: checkpoints(from: position, to: next))
                } catch {
                    prefetch?.cancel()
                    throw error
                }
                position = next
                guard let prefetch else { return }
                url = nextURL
                fetched = try await prefetch.value.get()
            }
        }
    }

    private func fetch(_ url: String, position: Position) async throws(PollFailure) -> Fetched {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "herald")
        do {
            for header in try configuration.auth.resolve() { request.headers.replaceOrAdd(name: header.name, value: header.value.value) }
        } catch {
            throw .transport("\(error)", url: url)
        }
        if let etag = position.etag { request.headers.add(name: "If-None-Match", value: etag) }
        if let lastModified = position.lastModified { request.headers.add(name: "If-Modified-Since", value: lastModified) }
        do {
            let response = try await client.execute(request, timeout: .milliseconds(Int64(configuration.requestTimeoutSeconds * 1000)))
            let buffer = try await response.body.collect(upTo: configuration.maxPageBytes)
            return (Int(response.status.code), response.headers, Array(buffer.readableBytesView))
        } catch {
            throw .transport(await TLSFailureDescription.describe(error, url: url, options: configuration.tls,
                                                                   configuration: tlsConfiguration), url: url)
        }
    }

    private func checkPins() async throws(PollFailure) {
        let pins = configuration.tls.pins.compactMap(SPKIPin.init)
        guard !pins.isEmpty, let components = URLComponents(string: endpoint.url), components.scheme == "https",
              let host = components.host else { return }
        do {
            try await SPKIPinProbe.verify(host: host, port: components.port ?? 443, serverName: nil,
                                          configuration: try configuration.tls.makeConfiguration(), pins: pins)
        } catch {
            throw .pins("TLS pin check of \(host) failed: \(error)")
        }
    }

    private func commit(_ records: [SourceRecord], checkpoints: [SourceCheckpoint]) async throws(PollFailure) {
        guard !records.isEmpty || !checkpoints.isEmpty else { return }
        do {
            _ = try await ingest.commit(records, checkpoints: checkpoints)
        } catch {
            throw .commit(error)
        }
    }

    private func key(_ name: String) -> String { "\(endpoint.name)/\(name)" }

    private func loadPosition() async throws(PollFailure) -> Position {
        do {
            return Position(cursor: try await ingest.checkpoint(source: source, key: key("cursor")),
                            etag: try await ingest.checkpoint(source: source, key: key("etag")),
                            lastModified: try await ingest.checkpoint(source: source, key: key("last_modified")))
        } catch {
            throw .commit(error)
        }
    }

    private func checkpoints(from old: Position, to new: Position) -> [SourceCheckpoint] {
        var changed: [SourceCheckpoint] = []
        if old.cursor != new.cursor { changed.append(SourceCheckpoint(source: source, key: key("cursor"), value: new.cursor)) }
        if old.etag != new.etag { changed.append(SourceCheckpoint(source: source, key: key("etag"), value: new.etag)) }
        if old.lastModified != new.lastModified {
            changed.append(SourceCheckpoint(source: source, key: key("last_modified"), value: new.lastModified))
        }
        return changed
    }
}
