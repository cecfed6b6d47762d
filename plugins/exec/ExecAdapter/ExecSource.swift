import Foundation
import HeraldPluginAPI

#if canImport(Glibc)
import Glibc
#endif

/// Runs an exec plugin: handshake, then events as JSON lines on its stdout, committed in batches of
/// at most `max_unacked`, each answered on its stdin with `{"ack":N}` once committed or `{"nack":N,…}`
/// once dead-lettered. While a batch commits nothing more is read, so a flooding plugin blocks on
/// its own writes. A plugin that exits is restarted with backoff and is expected to send its unacked
/// events again (they are idempotent in the store).
struct ExecSource: SourceAdapter {
    let name: String
    let configuration: ExecSourceConfiguration
    let normaliser: ExecNormaliser

    func run(context: SourceContext) async throws {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            NamedThread.start(named: "exec \(name)") {
                ExecLoop(source: self, context: context).run()
                done.resume()
            }
        }
    }
}

/// The exec source's thread.
private struct ExecLoop {
    let source: ExecSource
    let context: SourceContext
    var origin: String { "exec:\(source.configuration.command[0])" }

    func run() {
        var backoff = context.reconnect
        while !context.shutdown.isTriggered {
            let started = ContinuousClock.now
            let reason = session()
            context.health.report(connected: false, at: context.clock.now())
            guard !context.shutdown.isTriggered else { return }
            context.metrics.connectionFailures.increment()
            if ContinuousClock.now - started > .seconds(30) { backoff.reset() }
            let delay = backoff.nextDelaySeconds()
            context.logger.warning("Exec plugin stopped; restarting.", metadata: [
                "command": "\(source.configuration.command.joined(separator: " "))", "reason": "\(reason)",
                "retry_in_s": "\(String(format: "%.2f", delay))",
            ])
            let deadline = ContinuousClock.now + .milliseconds(Int64(delay * 1000))
            while !context.shutdown.isTriggered, ContinuousClock.now < deadline { usleep(50_000) }
        }
    }

    /// One child's life. Returns why it ended.
    private func session() -> String {
        var environment = ProcessInfo.processInfo.environment
        environment.merge(source.configuration.environment) { $1 }
        let child: ExecChild
        do {
            child = try ExecChild(command: source.configuration.command, environment: environment)
        } catch {
            return "\(error)"
        }
        defer { child.stop(grace: .seconds(2)) }
        var lines = LineBuffer(maximumLineBytes: source.configuration.maxLineBytes)
        var queued: [LineBuffer.Line] = []
        var errors = LineBuffer(maximumLineBytes: 4096)
        guard child.send(#"{"herald":"exec","protocol":1}"#) else { return "the plugin closed its stdin" }

        // Handshake: the first stdout line must be {"protocol":1}.
        let handshakeDeadline = ContinuousClock.now + .milliseconds(Int64(source.configuration.handshakeTimeoutSeconds * 1000))
        while queued.isEmpty {
            guard ContinuousClock.now < handshakeDeadline else { return "no hello line within \(source.configuration.handshakeTimeoutSeconds) s" }
            if child.hasExited, !drain(child.stdout, into: &lines, queue: &queued) { return "exited during the handshake (status \(child.status ?? -1))" }
            wait(child)
            _ = drain(child.stdout, into: &lines, queue: &queued)
            relayErrors(child, &errors)
        }
        guard case .complete(let hello) = queued.removeFirst(), case .success(.object(let members)) = JSONValue.parse(hello),
              members["protocol"] == .number(1) else {
            return #"bad hello line: expected {"protocol":1}"#
        }
        context.metrics.connects.increment()
        context.health.report(connected: true, at: context.clock.now())
        context.logger.info("Exec plugin started.", metadata: ["pid": "\(child.pid)", "command": "\(source.configuration.command[0])"])

        while true {
            if context.shutdown.isTriggered {
                return "shutdown"
            }
            if queued.isEmpty { wait(child) }
            let open = drain(child.stdout, into: &lines, queue: &queued, limit: source.configuration.maxUnacked)
            relayErrors(child, &errors)
            if !queued.isEmpty {
                let batch = Array(queued.prefix(source.configuration.maxUnacked))
                queued.removeFirst(batch.count)
                if let failure = commit(batch, to: child) { return failure }
            } else if !open || child.hasExited {
                return "exited with status \(child.status ?? -1)"
            }
        }
    }

    /// Normalises and commits a batch, then answers every line that had a sequence number.
    private func commit(_ batch: [LineBuffer.Line], to child: ExecChild) -> String? {
        let now = context.clock.now()
        var answers: [(Int64?, SourceRecord)] = []
        for line in batch {
            context.metrics.received.increment()
            switch line {
            case .complete(let bytes):
                context.metrics.bytes.increment(by: bytes.count)
                answers.append(source.normaliser.normalise(line: bytes, origin: origin, receivedAt: now))
            case .overlong(let count):
                let provenance = Provenance(adapter: source.name, origin: origin, rawSize: count, receivedAt: now)
                answers.append((nil, SourceRecord(provenance: provenance, outcome: .rejected(
                    Rejection(.oversize, "line longer than \(source.configuration.maxLineBytes) bytes")), raw: [])))
            }
        }
        do {
            _ = try context.ingest.commit(answers.map(\.1))
        } catch {
            return "commit failed (\(error)); nothing of the batch was acknowledged"
        }
        for (sequence, record) in answers {
            guard let sequence else { continue }
            let reply: String
            switch record.outcome {
            case .event: reply = "{\"ack\":\(sequence)}"
            case .rejected(let rejection):
                let reason = rejection.description.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                reply = "{\"nack\":\(sequence),\"reason\":\"\(reason)\"}"
            }
            guard child.send(reply) else { return "the plugin closed its stdin" }
        }
        return nil
    }

    /// Waits up to 100 ms for output from the child.
    private func wait(_ child: ExecChild) {
        var descriptors = [pollfd(fd: child.stdout, events: Int16(POLLIN), revents: 0), pollfd(fd: child.stderr, events: Int16(POLLIN), revents: 0)]
        _ = poll(&descriptors, 2, 100)
    }

    /// Reads what is available (stopping once `limit` lines are queued). Returns false at end of file.
    private func drain(_ fd: Int32, into lines: inout LineBuffer, queue: inout [LineBuffer.Line], limit: Int = .max) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while queue.count < limit {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return false }
            if count < 0 { return errno == EAGAIN || errno == EINTR }
            queue += lines.append(chunk[0..<count])
        }
        return true
    }

    /// Turns the child's stderr lines into log lines.
    private func relayErrors(_ child: ExecChild, _ errors: inout LineBuffer) {
        var lines: [LineBuffer.Line] = []
        _ = drain(child.stderr, into: &errors, queue: &lines)
        for case .complete(let bytes) in lines {
            context.logger.info("Plugin says: \(String(decoding: bytes, as: UTF8.self))", metadata: ["plugin": "\(source.name)"])
        }
    }
}
