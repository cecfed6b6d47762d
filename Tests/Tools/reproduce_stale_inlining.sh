#!/bin/sh
# The smallest package that shows why Package.swift names every reached target as a direct dependency.
#
# App depends on Mid, Mid on Lib, and App uses Lib's class Box (reached through Mid). A release build
# inlines Box's allocation, with its size, into App. When a stored property is added to Box, an
# incremental `swift build -c release` recompiles Lib and Mid; Mid's .swiftmodule comes out identical, so
# the compiler does not rewrite it, and App, whose compile SwiftPM makes depend only on its direct
# dependencies' modules, is not recompiled. App then allocates Box 24 bytes short and the heap is corrupted.
#
# Usage: Tests/Tools/reproduce_stale_inlining.sh [--direct]
#   --direct  App also names Lib as a direct dependency (what Package.swift does); the build is then right.
# Prints the sizes and exits 1 when App's allocation disagrees with Box's metadata.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/herald-stale-inlining.XXXXXX)
trap 'rm -rf "$work"' EXIT
app_dependencies='"Mid"'
[ "${1:-}" = "--direct" ] && app_dependencies='"Mid", "Lib"'
mkdir -p "$work/Sources/Lib" "$work/Sources/Mid" "$work/Sources/App"
cat > "$work/Package.swift" <<EOF
// swift-tools-version:6.0
import PackageDescription
let package = Package(name: "stale", targets: [
    .target(name: "Lib"),
    .target(name: "Mid", dependencies: ["Lib"]),
    .executableTarget(name: "App", dependencies: [$app_dependencies]),
])
EOF
cat > "$work/Sources/Lib/Box.swift" <<'EOF'
public final class Box: Sendable {
    public let a: Int
    public init(a: Int) { self.a = a }
    public func total() -> Int { a }
}
EOF
printf 'import Lib\npublic func greeting() -> String { "hello" }\n' > "$work/Sources/Mid/Mid.swift"
printf 'import Lib\nimport Mid\nprint(greeting(), (0..<3).map { Box(a: $0) }.map { $0.total() })\n' > "$work/Sources/App/main.swift"
cd "$work"
swift build -c release -q
sed -i 's/    public let a: Int/    public let a: Int\n    let extra: (Int, Int, Int) = (1, 2, 3)/' Sources/Lib/Box.swift
swift build -c release -q
python3 "$here/check_allocation_sizes.py" .build/release/App
