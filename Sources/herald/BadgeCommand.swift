import ArgumentParser
import Foundation
import HeraldCore
import HeraldPostgres
import HeraldPluginAPI

/// `herald badge USER`
struct BadgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "badge",
        abstract: "Print a user's badge JSON from the store: {\"unread\":N,\"chats\":{…}}.")

    @OptionGroup var config: ConfigOption

    @Argument(help: "The user id.")
    var user: String

    func run() async throws {
        let configuration = try config.load()
        let store = try configuration.store.open(logger: makeLogger(level: .notice))
        let badge = try store.badge(for: UserID(user))
        print(String(decoding: OutputWireFormat.encode(.badge(badge)), as: UTF8.self))
    }
}
