import Foundation

/// Query-string edits shared by the adapters that send a position in the URL (a page cursor, a resume id).
public enum URLQuery {
    /// `url` with the query parameter `name` set to `value` (replacing any earlier value); `url` unchanged
    /// when it cannot be parsed.
    public static func setting(_ name: String, to value: String, in url: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        var query = components.queryItems ?? []
        query.removeAll { $0.name == name }
        query.append(URLQueryItem(name: name, value: value))
        components.queryItems = query
        return components.string ?? url
    }
}
