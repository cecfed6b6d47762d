import ArgumentParser
import AsyncHTTPClient
import Foundation
import HeraldCore
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// `herald tail`
struct TailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Watch the normalised event stream of a running gateway, filtered on the server.",
        discussion: """
            Connects to the admin API (--url, else admin.listen of --config, else http://127.0.0.1:9464) and prints each \
            committed event until Ctrl-C, reconnecting by itself if the gateway restarts. On a terminal: one aligned, \
            coloured line per event; piped or with --json: one JSON object per line. Message bodies are redacted \
            unless --show-body. A client that cannot keep up is told how many events it missed; the gateway never waits.

            Filters combine with AND: --type (globs, repeatable), --chat, --user (sender, recipient, reader or member), \
            --source (adapter name), and --where with an expression over fields:
              type chat source origin user message.id message.from message.to message.body read.reader read.up_to members
            using == != ~ (glob) !~ && || ! and parentheses, e.g.
              herald tail --where 'message.from == "alice" && chat ~ "team-*"'
            """)

    @Option(help: "Admin API base URL.") var url: String?
    @Option(help: "File holding the admin bearer token (default: $HERALD_ADMIN_TOKEN, then the config's admin.token).") var tokenFile: String?
    @Option(name: [.short, .long], help: "Config file used to find the admin address and token.") var config: String?
    @Option(help: "Event type or glob, e.g. message.received or 'messages.*' (repeatable).") var type: [String] = []
    @Option(help: "Only this chat (repeatable).") var chat: [String] = []
    @Option(help: "Only events involving this user (repeatable).") var user: [String] = []
    @Option(help: ArgumentHelp("Only events from this source adapter (repeatable); or a URL (mqtt://host:1883, wss://host/path, https://host/path) to run that source on its own.",
                               discussion: "With a URL nothing is stored and the gateway's persistent session is untouched."))
    var source: [String] = []
    @Option(name: .customLong("where"), help: "A filter expression (see above).") var expression: String?
    @Option(help: "Stop after N events.") var limit: Int?
    @Option(help: "Keep one event in N, written 1/N.") var sample: String?
    @Flag(help: "One JSON object per line (the default when stdout is not a terminal).") var json = false
    @Flag(help: "Also show the outputs each event produced (notifications, receipts, badges).") var outputs = false
    @Flag(help: "Show message bodies and previews instead of <redacted>.") var showBody = false

    func run() async throws {
        var filter = TailFilter()
        filter.types = type
        filter.chats = chat
        filter.users = user
        let standaloneURL = source.first { $0.contains("://") }
        filter.sources = source.filter { !$0.contains("://") }
        if let expression {
            do {
                filter.expression = try FilterParser.parse(expression)
            } catch {
                FileHandle.standardError.write(Data("error: --where: \(error.render(expression))\n".utf8))
                throw ExitCode(2)
            }
        }
        if let sample {
            let parts = sample.split(separator: "/")
            guard parts.count == 2, parts[0] == "1", let every = Int(parts[1]), every > 0 else {
                throw ValidationError("--sample takes 1/N, e.g. 1/100")
            }
            filter.sampleEvery = every
        }
        let printer = TailPrinter(json: json || isatty(STDOUT_FILENO) == 0, outputs: outputs, showBody: showBody)
        if let standaloneURL {
            try await runStandalone(url: standaloneURL, filter: filter, printer: printer)
            return
        }
        let client = try AdminClient.resolve(url: url, tokenFile: tokenFile, configPath: config ?? ProcessInfo.processInfo.environment["HERALD_CONFIG"] ?? "herald.yaml")
        var query = filter.query
        if outputs { query.append(("outputs", "1")) }
        if showBody { query.append(("show_body", "1")) }
        if let limit { query.append(("limit", String(limit))) }
        let path = "/v1/tail?" + query.map { "\($0.name)=\(Self.escape($0.value))" }.joined(separator: "&")
        try await follow(client: client, path: path, printer: printer)
    }

    private func follow(client: AdminClient, path: String, printer: TailPrinter) async throws {
        var printed = 0
        var connectedBefore = false
        var backoffSeconds = 0.5
        while true {
            do {
                // A short preflight: a long-lived stream request would retry a refused connection until its deadline.
                _ = try await client.execute("/v1/status", timeout: .seconds(3))
                let response = try await client.execute(path, timeout: .hours(24 * 365))
                if connectedBefore { FileHandle.standardError.write(Data("… reconnected to \(client.baseURL)\n".utf8)) }
                connectedBefore = true
                backoffSeconds = 0.5
                var parser = ServerSentEventParser()
                for try await buffer in response.body {
                    for event in parser.feed(buffer) {
                        switch event.name {
                        case "event":
                            printer.print(event.data)
                            printed += 1
                            if let limit, printed >= limit { return }
                        case "dropped":
                            FileHandle.standardError.write(Data("… the gateway dropped events this client could not keep up with: \(event.data)\n".utf8))
                        default:
                            continue
                        }
                    }
                }
                if let limit, printed >= limit { return }
                FileHandle.standardError.write(Data("… the gateway closed the stream (restarting?); reconnecting\n".utf8))
            } catch let failure as AdminClient.Failure {
                guard connectedBefore, case .notRunning = failure else {
                    FileHandle.standardError.write(Data("error: \(failure)\n".utf8))
                    throw ExitCode(1)
                }
                FileHandle.standardError.write(Data("… gateway at \(client.baseURL) unreachable; retrying in \(String(format: "%.1f", backoffSeconds)) s\n".utf8))
            } catch {
                guard connectedBefore else { throw error }
                FileHandle.standardError.write(Data("… connection lost (\(error)); reconnecting\n".utf8))
            }
            try await Task.sleep(for: .milliseconds(Int64(backoffSeconds * 1000)))
            backoffSeconds = min(10, backoffSeconds * 2)
        }
    }

    static func escape(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._*"))) ?? value
    }
}

/// Splits a `text/event-stream` into events.
struct ServerSentEventParser {
    struct Event {
        var name: String
        var data: String
    }

    private var pending = ""
    private var name = "message"
    private var data: [String] = []

    mutating func feed(_ buffer: ByteBuffer) -> [Event] {
        pending += String(buffer: buffer)
        var events: [Event] = []
        while let newline = pending.firstIndex(of: "\n") {
            let line = String(pending[..<newline])
            pending.removeSubrange(...newline)
            if line.isEmpty {
                if !data.isEmpty { events.append(Event(name: name, data: data.joined(separator: "\n"))) }
                name = "message"
                data = []
            } else if line.hasPrefix("event:") {
                name = line.dropFirst(6).trimmingCharacters(in: .whitespaces)
            } else if line.hasPrefix("data:") {
                data.append(String(line.dropFirst(5)).trimmingCharacters(in: .whitespaces))
            }
        }
        return events
    }
}
