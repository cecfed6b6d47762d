import Foundation
import HeraldTestKit
import Testing

@Suite("Child processes")
struct ProcessSpawnTests {
    /// A child gets the standard streams and nothing else: a descriptor the parent holds open (here a pipe
    /// made without close-on-exec, as another thread's could be) does not leak into it, so it cannot keep
    /// that pipe's reader from seeing end of file.
    @Test func aChildInheritsOnlyTheStandardStreams() async throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { ends.forEach { close($0) } }
        let directory = try TemporaryDirectory()
        // `ls` lists its own descriptors; the one it opens to read the directory is the only one past 2.
        let child = try ChildProcess(executable: "/bin/ls", arguments: ["/proc/self/fd"], logPath: directory.path("fds.log"))
        #expect(try await child.waitForExit() == 0)
        let descriptors = child.output.split(whereSeparator: \.isWhitespace).compactMap { Int32($0) }
        #expect(!descriptors.contains(ends[0]) && !descriptors.contains(ends[1]), "inherited: \(descriptors), pipe: \(ends)")
        #expect(descriptors.filter { $0 > 2 }.count <= 1, "\(descriptors)")
    }
}
