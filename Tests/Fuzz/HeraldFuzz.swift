import Foundation

// herald-fuzz: the fuzz targets of Herald's decoders of untrusted bytes.
//
// Built by `make fuzz` with libFuzzer and the address sanitizer (`-sanitize=fuzzer,address
// -parse-as-library -DHERALD_FUZZ`), it is a libFuzzer binary: HERALD_FUZZ_TARGET names the target and
// libFuzzer's own flags follow. Built plainly (as `swift build` and `make test` do), it replays inputs:
// `herald-fuzz TARGET PATH...` runs each file (or each file in each folder) through the target and
// checks its properties, which is how the committed corpora stay regression tests.

#if HERALD_FUZZ
/// The target named by HERALD_FUZZ_TARGET, looked up once.
private let selected: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["HERALD_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget.named(name) else {
        fatalError("set HERALD_FUZZ_TARGET to one of: \(FuzzTarget.all.map(\.name).joined(separator: ", "))")
    }
    return target
}()

/// libFuzzer's entry point: one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    selected.run(size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : [])
    return 0
}

/// libFuzzer's driver (its `main` without being `main`).
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

/// The process entry: SwiftPM links an executable target's `main` to `<target>_main`, so this hands
/// the arguments to libFuzzer's driver.
@_cdecl("herald_fuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var count = argc
    var vector = argv
    return runFuzzerDriver(&count, &vector) { data, size in fuzzOneInput(data, size) }
}
#else
/// The corpus replayer.
@main
enum HeraldFuzz {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let name = arguments.first, name != "--help", name != "--list" else {
            print("USAGE: herald-fuzz TARGET PATH...   (replays corpus files through a fuzz target)\n\nTargets:")
            for target in FuzzTarget.all { print("  \(target.name.padding(toLength: 12, withPad: " ", startingAt: 0)) \(target.summary)") }
            exit(0)
        }
        guard let target = FuzzTarget.named(name) else {
            FileHandle.standardError.write(Data("herald-fuzz: no target \(name); try --list\n".utf8))
            exit(64)
        }
        var files: [URL] = []
        for path in arguments.dropFirst() {
            let url = URL(fileURLWithPath: path)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                FileHandle.standardError.write(Data("herald-fuzz: \(path) does not exist\n".utf8))
                exit(66)
            }
            if isDirectory.boolValue {
                let entries = (try? FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)) ?? []
                files += entries.sorted { $0.lastPathComponent < $1.lastPathComponent }
            } else {
                files.append(url)
            }
        }
        for file in files {
            guard let data = FileManager.default.contents(atPath: file.path) else { continue }
            target.run(Array(data))
        }
        print("\(target.name): \(files.count) inputs replayed, every property held")
    }
}
#endif
