import Foundation
import HeraldTestKit

/// What a Herald process's own metrics say about its commits: how many, how many records each held,
/// how long each took, and with PostgreSQL how many statements each sent. Read from `/metrics` on the
/// admin API before the process stops, so a phase can show why its latency or rate is what it is.
struct CommitFigures {
    /// Commits since the process started.
    var commits: Int
    /// Records per commit, on average.
    var meanBatch: Double
    /// Milliseconds per commit (slice, apply, write and the sync), on average.
    var meanMilliseconds: Double
    /// Statements per commit sent to PostgreSQL, on average; `nil` with SQLite.
    var statementsPerCommit: Double?
    /// How long the phase ran, in seconds, where the phase knows it: the summary then says what share of
    /// it the single writer spent committing (near 100%, the writer is what limits the rate).
    var runSeconds: Double?

    /// Scrapes the admin API on `port`; `nil` when it does not answer or has no commits yet.
    init?(adminPort: Int) {
        guard let text = try? Loopback.get(port: adminPort, path: "/metrics") else { return nil }
        var values: [Substring: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.contains("{") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { values[parts[0]] = value }
        }
        guard let count = values["herald_commit_batch_size_count"], count > 0 else { return nil }
        commits = Int(count)
        meanBatch = (values["herald_commit_batch_size_sum"] ?? 0) / count
        meanMilliseconds = (values["herald_commit_duration_seconds_sum"] ?? 0) / max(1, values["herald_commit_duration_seconds_count"] ?? 0) * 1000
        statementsPerCommit = values["herald_store_statements_per_commit_count"].flatMap { statements in
            statements > 0 ? (values["herald_store_statements_per_commit_sum"] ?? 0) / statements : nil
        }
    }

    /// `57 commits, 1061 records and 102.3 ms each on average, 6 statements each, committing 91% of the run`.
    var summary: String {
        "\(commits) commits, \(format(meanBatch)) records and \(format(meanMilliseconds, 1)) ms each on average"
            + (statementsPerCommit.map { ", \(format($0, 1)) statements each" } ?? "")
            + (runSeconds.map { ", committing \(format(Double(commits) * meanMilliseconds / 10 / $0))% of the run" } ?? "")
    }
}
