import HeraldCore
import HeraldPluginAPI
import PropertyBased
import Testing

@Suite("Tail filters and the expression language")
struct TailFilterTests {
    static func record(_ event: ChatEvent, source: String = "broker") -> TailRecord {
        TailRecord(event: event, provenance: Provenance(adapter: source, origin: "t", rawSize: 1, receivedAt: Timestamp(milliseconds: 0)),
                   committedAt: Timestamp(milliseconds: 1), commitLatencyMilliseconds: 1, applied: true, outputs: [])
    }

    static let fromAliceInTeam = record(message("team-7", "m1", from: "alice", to: ["bob"]))
    static let fromBobInGeneral = record(message("general", "m2", from: "bob", to: ["carol"]))

    @Test func expressionsEvaluateOverFields() throws {
        let expression = try FilterParser.parse(#"message.from == "alice" && chat ~ "team-*""#)
        #expect(expression.matches(Self.fromAliceInTeam))
        #expect(!expression.matches(Self.fromBobInGeneral))
        #expect(try FilterParser.parse(#"user == "carol" || !(type ~ "message.*")"#).matches(Self.fromBobInGeneral))
        #expect(try FilterParser.parse(#"message.to != "bob""#).matches(Self.fromBobInGeneral))
        #expect(!(try FilterParser.parse(#"message.to !~ "b*""#).matches(Self.fromAliceInTeam)))
    }

    @Test(arguments: [
        (#"message.frm == "x""#, 1), (#"chat = "x""#, 6), (#"chat == x"#, 9), (#"(chat == "x""#, 13), (#"chat == "x" &&"#, 15),
        (#"chat == "unterminated"#, 9),
    ])
    func syntaxErrorsPointAtTheColumn(_ text: String, _ column: Int) {
        #expect(throws: FilterParser.SyntaxError.self) { try FilterParser.parse(text) }
        do {
            _ = try FilterParser.parse(text)
        } catch {
            #expect(error.column == column, "\(error.render(text))")
        }
    }

    /// Found by fuzzing: ten thousand open parentheses overflowed the stack of whoever parsed them, the
    /// gateway included (a filter arrives with `/v1/tail?where=`).
    @Test func nestingAndLengthAreBoundedWithAColumn() throws {
        let deep = String(repeating: "(", count: 10_000) + #"chat == "c1""# + String(repeating: ")", count: 10_000)
        let nested = #expect(throws: FilterParser.SyntaxError.self) { try FilterParser.parse(deep) }
        #expect(nested?.message == "nested deeper than 32 levels" && nested?.column == 33)
        let negations = #expect(throws: FilterParser.SyntaxError.self) { try FilterParser.parse(String(repeating: "!", count: 5_000) + #"chat == "c1""#) }
        #expect(negations?.column == 33)
        let ok = String(repeating: "(", count: 32) + #"chat == "c1""# + String(repeating: ")", count: 32)
        #expect(try FilterParser.parse(ok) == .comparison(field: .chat, op: .equal, value: "c1"))
        let long = Array(repeating: #"chat == "c1""#, count: 257).joined(separator: " || ")
        #expect(throws: FilterParser.SyntaxError.self) { try FilterParser.parse(long) }
        #expect(try FilterParser.parse(Array(repeating: #"chat == "c1""#, count: 256).joined(separator: " || ")).matches(Self.fromAliceInTeam) == false)
    }

    @Test func filtersCombineKindsChatsUsersAndSources() throws {
        var filter = TailFilter()
        filter.types = ["message.*"]
        filter.users = ["carol"]
        #expect(filter.matches(Self.fromBobInGeneral))
        #expect(!filter.matches(Self.fromAliceInTeam))
        filter.sources = ["websocket"]
        #expect(!filter.matches(Self.fromBobInGeneral))
        let roundTrip = try TailFilter(query: filter.query)
        #expect(roundTrip == filter)
    }

    /// Random expression trees print to text that parses back to the same tree.
    @Test func printedExpressionsParseBackToTheSameTree() async {
        let values = ["alice", "team-*", "with \"quotes\"", "back\\slash", "", "ünï"]
        func tree(_ codes: inout ArraySlice<Int>, depth: Int) -> FilterExpression {
            let code = codes.popFirst() ?? 0
            if depth > 3 || code % 4 == 0 {
                return .comparison(field: FilterField.allCases[code % FilterField.allCases.count],
                                   op: ComparisonOperator.allCases[(code / 7) % 4], value: values[(code / 3) % values.count])
            }
            switch code % 4 {
            case 1: return .and(tree(&codes, depth: depth + 1), tree(&codes, depth: depth + 1))
            case 2: return .or(tree(&codes, depth: depth + 1), tree(&codes, depth: depth + 1))
            default: return .not(tree(&codes, depth: depth + 1))
            }
        }
        await propertyCheck(count: 300, input: Gen.int(in: 0...10_000).array(of: 1...30)) { codes in
            var slice = codes[...]
            let expression = tree(&slice, depth: 0)
            #expect((try? FilterParser.parse(expression.description)) == expression, "\(expression)")
        }
    }

    @Test func aSlowClientLosesEventsNotThePipelineAndIsToldHowMany() async {
        let tap = EventTap()
        let subscription = tap.subscribe(filter: TailFilter(), capacity: 3)
        tap.publish((0..<10).map { Self.record(message("c", MessageID("m\($0)"), from: "a")) })
        var records = 0
        var dropped = 0
        loop: while let item = await subscription.next(idleAfter: .milliseconds(50)) {
            switch item {
            case .record: records += 1
            case .dropped(let count): dropped += count
            case .idle: break loop
            }
        }
        #expect(records == 3 && dropped == 7)
        subscription.cancel()
        #expect(!tap.isActive)
    }
}
