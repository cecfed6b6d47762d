import HeraldAdapters
import HeraldCore
import HeraldPluginAPI

extension FuzzTarget {
    /// The tail filter language: what parses prints to text that parses to the same expression; what
    /// does not names a column inside the text.
    static let tailFilter = FuzzTarget(name: "tail-filter", summary: "the herald tail filter parser") { input in
        let text = String(decoding: input, as: UTF8.self)
        do throws(FilterParser.SyntaxError) {
            let expression = try FilterParser.parse(text)
            guard let again = try? FilterParser.parse(expression.description), again == expression else {
                violated("\(expression) does not survive printing", input)
            }
        } catch {
            if error.message.isEmpty || error.column < 0 || error.column > text.count + 1 {
                violated("a syntax error at column \(error.column) of \(text.count): \(error.message)", input)
            }
        }
    }

    /// The configuration loader: any text is a configuration or one error with a place in the file.
    static let configuration = FuzzTarget(name: "config", summary: "the configuration loader (YAML, sections, every adapter's options)") { input in
        let text = String(decoding: input, as: UTF8.self)
        do throws(ConfigurationError) {
            _ = try ConfigurationLoader(registry: BuiltinAdapters.registry, environment: ["SET": "value"]).load(text: text, file: "fuzz.yaml")
        } catch {
            if error.description.isEmpty { violated("a configuration error without words", input) }
        }
    }
}
