import HeraldPluginAPI

/// One fuzz target: a decoder of untrusted bytes and the properties every input must keep. A broken
/// property stops the process (`fatalError`), which libFuzzer reports as a crash with the input.
struct FuzzTarget: Sendable {
    /// The name `make fuzz` and the corpus folder use.
    let name: String
    /// What it decodes.
    let summary: String
    /// Runs one input.
    let run: @Sendable ([UInt8]) -> Void

    /// Every target, in the order `make fuzz` runs them.
    static let all: [FuzzTarget] = [
        .json, .payload, .mqttTopic, .webSocket, .restPage, .execLine, .tailFilter, .configuration,
    ]

    /// The target called `name`.
    static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }
}

/// Stops with the broken property and the input, shortened, for the crash report.
func violated(_ property: String, _ input: [UInt8]) -> Never {
    let shown = String(decoding: input.prefix(200), as: UTF8.self)
    fatalError("property violated: \(property)\ninput (\(input.count) bytes): \(shown)")
}

/// A rejection must say why.
func checkRejection(_ rejection: Rejection, _ input: [UInt8]) {
    if rejection.detail.isEmpty { violated("a rejection (\(rejection.reason.rawValue)) without a detail", input) }
}

/// A decoded event's identifiers stay within the decoder's limit and are never empty.
func checkIdentifiers(_ event: ChatEvent, _ input: [UInt8]) {
    var identifiers = [event.chat.rawValue]
    switch event {
    case .messageReceived(let message):
        identifiers += [message.id.rawValue, message.sender.rawValue] + (message.recipients ?? []).map(\.rawValue)
    case .messagesRead(let read): identifiers += [read.reader.rawValue, read.upTo.rawValue]
    case .chatCreated(let created): identifiers += created.members.map(\.rawValue)
    case .chatOpened(let focus), .chatClosed(let focus): identifiers.append(focus.user.rawValue)
    }
    for identifier in identifiers where identifier.isEmpty || identifier.utf8.count > EventPayloadDecoder.maxIdentifierLength {
        violated("an identifier of \(identifier.utf8.count) bytes got through", input)
    }
}
