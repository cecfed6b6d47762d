import AsyncHTTPClient
import Foundation
import HeraldAdapters
import HeraldCore
import NIOCore
import NIOHTTP1

/// Talks to a running gateway's admin API; turns failures into messages a person can act on.
struct AdminClient {
    let baseURL: String
    let token: String?

    enum Failure: Error, CustomStringConvertible {
        case notRunning(String)
        case unauthorized(String)
        case badRequest(String)
        case unexpected(String)

        var description: String {
            switch self {
            case .notRunning(let url): "Herald is not running at \(url) (start it with `herald run`, or pass --url)."
            case .unauthorized(let url): "\(url) refused the token: set HERALD_ADMIN_TOKEN or pass --token-file with the admin.token of the gateway."
            case .badRequest(let message): message
            case .unexpected(let message): message
            }
        }
    }

    /// Resolves the URL: `--url`, else the config's `admin.listen` if a config is found, else the default.
    static func resolve(url: String?, tokenFile: String?, configPath: String?) throws -> AdminClient {
        var base = url
        var token = ProcessInfo.processInfo.environment["HERALD_ADMIN_TOKEN"]
        if base == nil, let configPath, FileManager.default.fileExists(atPath: configPath),
           let configuration = try? ConfigurationLoader(registry: BuiltinAdapters.registry, environment: ProcessInfo.processInfo.environment)
               .load(path: configPath) {
            let listen = configuration.admin.hostAndPort
            base = listen.map { "http://\($0.host == "0.0.0.0" ? "127.0.0.1" : $0.host):\($0.port)" }
            if token == nil { token = try? configuration.admin.resolvedToken() }
        }
        if let tokenFile {
            guard let text = try? String(contentsOfFile: tokenFile, encoding: .utf8) else { throw Failure.unexpected("cannot read \(tokenFile)") }
            token = text.trimmingCharacters(in: .newlines)
        }
        return AdminClient(baseURL: base ?? "http://127.0.0.1:9464", token: token)
    }

    func request(_ path: String) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: baseURL + path)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        request.headers.add(name: "Accept", value: path.hasPrefix("/v1/tail") ? "text/event-stream" : "application/json")
        return request
    }

    /// Sends a request; maps connection and status failures.
    func execute(_ path: String, timeout: TimeAmount) async throws -> HTTPClientResponse {
        let response: HTTPClientResponse
        do {
            response = try await HTTPClient.shared.execute(request(path), timeout: timeout)
        } catch {
            throw Failure.notRunning(baseURL)
        }
        switch response.status.code {
        case 200: return response
        case 401: throw Failure.unauthorized(baseURL)
        case 400:
            let body = try await response.body.collect(upTo: 1 << 20)
            let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
            throw Failure.badRequest(object?["error"] as? String ?? "bad request")
        default:
            throw Failure.unexpected("\(baseURL)\(path) answered \(response.status)")
        }
    }

    /// GETs JSON.
    func json(_ path: String) async throws -> [String: Any] {
        let response = try await execute(path, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 16 << 20)
        return (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]) ?? [:]
    }
}
