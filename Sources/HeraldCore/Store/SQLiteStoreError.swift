import Foundation

/// Why the SQLite store could not be opened or could not make a commit durable, in one line that names
/// the problem and the fix.
public enum SQLiteStoreError: Error, CustomStringConvertible, Sendable {
    /// The folder `store.path` lives in does not exist and cannot be created.
    case cannotCreateDirectory(directory: String, detail: String)
    /// The file could not be opened or migrated.
    case cannotOpen(path: String, detail: String)
    /// A newer Herald migrated the file: it holds migrations this one does not know.
    case newerThanBinary(path: String, unknown: [String])
    /// The write-ahead log could not be synced to the disk: no commit counts as durable from then on.
    case walSyncFailed(path: String, detail: String)

    /// One line: the problem and the fix.
    public var description: String {
        switch self {
        case .cannotCreateDirectory(let directory, let detail):
            "cannot create the store's folder \(directory): \(detail) (set store.path to a file in a folder Herald may write)"
        case .cannotOpen(let path, let detail):
            "cannot open the SQLite store \(path): \(detail) (check store.path and that Herald may read and write the file and its folder)"
        case .newerThanBinary(let path, let unknown):
            "the SQLite store \(path) was migrated by a newer Herald (\(unknown.joined(separator: ", "))); run a Herald at least as new, or restore the backup taken before the upgrade"
        case .walSyncFailed(let path, let detail):
            "cannot sync the SQLite store's log \(path) to the disk: \(detail); no commit is acknowledged until Herald restarts (check the disk and the file system)"
        }
    }

    /// The POSIX reason behind a Foundation file error (such as "Not a directory"), else the error's own text.
    static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain,
           let message = strerror(Int32(underlying.code)) {
            return String(cString: message)
        }
        if nsError.domain == NSPOSIXErrorDomain, let message = strerror(Int32(nsError.code)) { return String(cString: message) }
        return "\(error)"
    }
}
