extension MosquittoClient {
    /// Drives the client on the calling thread until `stop` returns true: waits for the socket,
    /// reads everything available, writes queued packets, keeps the connection alive.
    /// For simple clients (tools, tests, benchmarks) that need no commit step between read and write.
    /// - Throws: ``MosquittoError`` when the connection fails.
    public func serviceLoop(pollMilliseconds: Int32 = 20, until stop: () -> Bool) throws(MosquittoError) {
        while !stop() {
            if waitForActivity(timeoutMilliseconds: pollMilliseconds) {
                for _ in 0..<10_000 {
                    try readPacket()
                    guard waitForActivity(timeoutMilliseconds: 0) else { break }
                }
            }
            try writePending()
            try housekeeping()
        }
    }
}
