import Foundation
import HeraldCore

/// Prints tailed events: JSON lines, or aligned coloured text on a terminal.
struct TailPrinter {
    let json: Bool
    let outputs: Bool
    let showBody: Bool

    func print(_ data: String) {
        guard !json else {
            FileHandle.standardOutput.write(Data((data + "\n").utf8))
            return
        }
        guard let document = try? JSONDecoder().decode(TailEventDocument.self, from: Data(data.utf8)) else { return }
        let time = Date(timeIntervalSince1970: Double(document.committedAt) / 1000)
        let formatter = Date.ISO8601FormatStyle(includingFractionalSeconds: true).timeZone(separator: .omitted)
        let clock = String(time.formatted(formatter).dropFirst(11).prefix(12))
        let who: String
        let detail: String
        switch document.type {
        case "message.received":
            who = "\(document.text("from") ?? "?") → \(document.text("to") ?? "chat")"
            detail = "\"\(document.text("body")?.prefix(60) ?? "")\""
        case "messages.read":
            who = document.text("reader") ?? "?"
            detail = "read up to \(document.text("up_to") ?? "?")"
        case "chat.created":
            who = document.text("members") ?? ""
            detail = "members"
        default:
            who = document.text("user") ?? "?"
            detail = ""
        }
        let colour = switch document.type {
        case "message.received": "\u{1B}[32m"
        case "messages.read": "\u{1B}[36m"
        case "chat.created": "\u{1B}[35m"
        default: "\u{1B}[33m"
        }
        let duplicate = document.applied ? "" : " \u{1B}[2m(duplicate)\u{1B}[0m"
        var line = "\u{1B}[2m\(clock)\u{1B}[0m  \(colour)\(document.type.padding(toLength: 17, withPad: " ", startingAt: 0))\u{1B}[0m "
            + "\(document.chat.padding(toLength: 12, withPad: " ", startingAt: 0)) \(who.padding(toLength: 24, withPad: " ", startingAt: 0)) \(detail)\(duplicate)"
        for output in document.outputs ?? [] {
            line += "\n    \u{1B}[2m↳ \(output.kind) → \(output.user): \(output.payload)\u{1B}[0m"
        }
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
