import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where log lines go: a file descriptor (standard error for `herald run`), one whole line at a time,
/// so lines from different threads never interleave.
public final class LogLineOutput: Sendable {
    private let descriptor: Mutex<Int32>

    /// Writes to `descriptor`, which stays open for the output's life (the caller owns it).
    public init(descriptor: Int32) {
        self.descriptor = Mutex(descriptor)
    }

    /// Standard error.
    public static func standardError() -> LogLineOutput { LogLineOutput(descriptor: STDERR_FILENO) }

    /// Writes `line` whole. A log line that cannot be written is dropped: logging never stops the gateway.
    public func write(_ line: [UInt8]) {
        descriptor.withLock { descriptor in
            line.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = Glibc.write(descriptor, raw.baseAddress.map { $0 + offset }, raw.count - offset)
                    if written > 0 {
                        offset += written
                    } else if written < 0 && errno == EINTR {
                        continue
                    } else {
                        return
                    }
                }
            }
        }
    }
}
