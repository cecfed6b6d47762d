/// Parses ``FilterExpression`` text. Errors carry the 1-based column for a caret under it.
public struct FilterParser {
    /// A syntax error at a column.
    public struct SyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
        /// What is wrong.
        public var message: String
        /// 1-based column in the expression.
        public var column: Int

        /// The message with the expression and a caret under the column.
        public func render(_ source: String) -> String {
            "\(message)\n  \(source)\n  \(String(repeating: " ", count: max(0, column - 1)))^"
        }

        /// `column N: message`
        public var description: String { "column \(column): \(message)" }
    }

    private enum Token: Equatable {
        case identifier(String), string(String), op(String), lparen, rparen, end
    }

    private var tokens: [(token: Token, column: Int)] = []
    private var position = 0
    /// Open parentheses and `!` around the current position.
    private var depth = 0
    /// Comparisons read so far.
    private var comparisons = 0

    /// The deepest nesting of parentheses and `!`: the parser, matching and printing recurse once per
    /// level, and a filter comes from a client of the admin API.
    public static let maxDepth = 32
    /// The most comparisons in one filter (each `&&` or `||` adds a level to the tree).
    public static let maxComparisons = 256

    /// Parses `text`.
    public static func parse(_ text: String) throws(SyntaxError) -> FilterExpression {
        var parser = FilterParser()
        parser.tokens = try tokenize(text)
        let expression = try parser.parseOr()
        guard parser.current.token == .end else { throw SyntaxError(message: "unexpected \(parser.describeCurrent)", column: parser.current.column) }
        return expression
    }

    private var current: (token: Token, column: Int) { tokens[position] }

    private var describeCurrent: String {
        switch current.token {
        case .identifier(let name): "\"\(name)\""
        case .string: "a string"
        case .op(let op): "'\(op)'"
        case .lparen: "'('"
        case .rparen: "')'"
        case .end: "end of expression"
        }
    }

    private mutating func parseOr() throws(SyntaxError) -> FilterExpression {
        var expression = try parseAnd()
        while current.token == .op("||") {
            position += 1
            expression = .or(expression, try parseAnd())
        }
        return expression
    }

    private mutating func parseAnd() throws(SyntaxError) -> FilterExpression {
        var expression = try parseUnary()
        while current.token == .op("&&") {
            position += 1
            expression = .and(expression, try parseUnary())
        }
        return expression
    }

    private mutating func parseUnary() throws(SyntaxError) -> FilterExpression {
        switch current.token {
        case .op("!"), .lparen:
            guard depth < Self.maxDepth else {
                throw SyntaxError(message: "nested deeper than \(Self.maxDepth) levels", column: current.column)
            }
            depth += 1
            defer { depth -= 1 }
            return try parseNested()
        case .identifier(let name):
            comparisons += 1
            guard comparisons <= Self.maxComparisons else {
                throw SyntaxError(message: "more than \(Self.maxComparisons) comparisons", column: current.column)
            }
            return try parseComparison(name)
        default:
            throw SyntaxError(message: "expected a field, '!' or '(', found \(describeCurrent)", column: current.column)
        }
    }

    /// `!` and its operand, or a parenthesised expression.
    private mutating func parseNested() throws(SyntaxError) -> FilterExpression {
        switch current.token {
        case .op("!"):
            position += 1
            return .not(try parseUnary())
        default:
            position += 1
            let inner = try parseOr()
            guard current.token == .rparen else { throw SyntaxError(message: "expected ')', found \(describeCurrent)", column: current.column) }
            position += 1
            return inner
        }
    }

    /// `field op "value"`.
    private mutating func parseComparison(_ name: String) throws(SyntaxError) -> FilterExpression {
        guard let field = FilterField(rawValue: name) else {
            let known = FilterField.allCases.map(\.rawValue).joined(separator: ", ")
            throw SyntaxError(message: "unknown field \"\(name)\" (fields: \(known))", column: current.column)
        }
        position += 1
        guard case .op(let text) = current.token, let op = ComparisonOperator(rawValue: text) else {
            throw SyntaxError(message: "expected ==, !=, ~ or !~ after \(name), found \(describeCurrent)", column: current.column)
        }
        position += 1
        guard case .string(let value) = current.token else {
            throw SyntaxError(message: "expected a quoted value, found \(describeCurrent)", column: current.column)
        }
        position += 1
        return .comparison(field: field, op: op, value: value)
    }

    private static func tokenize(_ text: String) throws(SyntaxError) -> [(token: Token, column: Int)] {
        let characters = Array(text)
        var tokens: [(token: Token, column: Int)] = []
        var index = 0
        while index < characters.count {
            let character = characters[index]
            let column = index + 1
            if character.isWhitespace {
                index += 1
            } else if character == "(" || character == ")" {
                tokens.append((character == "(" ? .lparen : .rparen, column))
                index += 1
            } else if character == "\"" {
                var value = ""
                index += 1
                var closed = false
                while index < characters.count {
                    if characters[index] == "\\", index + 1 < characters.count {
                        value.append(characters[index + 1])
                        index += 2
                    } else if characters[index] == "\"" {
                        closed = true
                        index += 1
                        break
                    } else {
                        value.append(characters[index])
                        index += 1
                    }
                }
                guard closed else { throw SyntaxError(message: "unterminated string", column: column) }
                tokens.append((.string(value), column))
            } else if "=!~&|".contains(character) {
                let pair = index + 1 < characters.count ? String([character, characters[index + 1]]) : String(character)
                if ["==", "!=", "!~", "&&", "||"].contains(pair) {
                    tokens.append((.op(pair), column))
                    index += 2
                } else if character == "~" || character == "!" {
                    tokens.append((.op(String(character)), column))
                    index += 1
                } else {
                    throw SyntaxError(message: "unexpected '\(character)'", column: column)
                }
            } else if character.isLetter || character == "_" {
                var name = ""
                while index < characters.count, characters[index].isLetter || characters[index].isNumber || "._".contains(characters[index]) {
                    name.append(characters[index])
                    index += 1
                }
                tokens.append((.identifier(name), column))
            } else {
                throw SyntaxError(message: "unexpected '\(character)'", column: column)
            }
        }
        tokens.append((.end, characters.count + 1))
        return tokens
    }
}
