/// The multi-row inserts of rows with large values (message bodies, output payloads), in statements
/// of up to ``maximumRows`` rows. Their statements come from GRDB's cache by SQL text.
enum BulkInsert: Hashable {
    case messages
    case outbox

    /// Rows per statement at most (SQLite allows 32,766 parameters; 64 rows keep statements small).
    static let maximumRows = 64

    var columns: Int {
        switch self {
        case .messages: 6
        case .outbox: 5
        }
    }

    /// The statement for `rows` rows.
    func sql(rows: Int) -> String {
        let placeholder = "(" + Array(repeating: "?", count: columns).joined(separator: ",") + ")"
        let values = Array(repeating: placeholder, count: rows).joined(separator: ",")
        return switch self {
        case .messages:
            "INSERT OR IGNORE INTO messages(chat, id, sender, body, sent_at, received_at) VALUES \(values)"
        case .outbox:
            "INSERT INTO outbox(sink, recipient, kind, payload, created_at) VALUES \(values)"
        }
    }
}
