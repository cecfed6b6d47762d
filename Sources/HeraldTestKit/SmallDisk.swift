import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A small tmpfs mounted for one test, so a store can run out of space for real; it can grow while
/// mounted (`mount -o remount,size=…`) to give the space back. Mounting needs root, as the PostgreSQL
/// tests do (they start the cluster as the `postgres` user).
public final class SmallDisk: Sendable {
    /// Where it is mounted.
    public let path: String

    /// Mounts a tmpfs of `kibibytes` on a new temporary folder.
    public init(kibibytes: Int) async throws {
        guard geteuid() == 0 else { throw TestKitError("mounting a small tmpfs for the disk-full test needs root") }
        path = NSTemporaryDirectory() + "herald-small-disk-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try await Command.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=\(kibibytes)k,mode=0755", "tmpfs", path])
    }

    /// Grows (or shrinks) the mounted file system to `kibibytes`.
    public func resize(kibibytes: Int) async throws {
        try await Command.run("/usr/bin/mount", ["-o", "remount,size=\(kibibytes)k", path])
    }

    deinit {
        _ = try? Command.runBlocking("/usr/bin/umount", ["-l", path])
        try? FileManager.default.removeItem(atPath: path)
    }
}
