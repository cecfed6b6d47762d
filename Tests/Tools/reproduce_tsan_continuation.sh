#!/bin/sh
# The smallest program that shows which hand-over through a continuation the thread sanitizer cannot see.
#
# A thread writes an object and resumes a continuation with it; the task that awaited the continuation reads
# the object. The resume happens before the read, so this is not a race. The Swift runtime tells the
# sanitizer so when the task was suspended in its `await` by the time of the resume (the resume releases the
# task's address, and the task's next turn on an executor acquires it). A resume that comes while the task
# still runs, before its `await`, is matched by no acquire: the read is reported as a data race.
#
# Usage: Tests/Tools/reproduce_tsan_continuation.sh [--await-first]
#   --await-first  the thread waits 2 ms before it resumes, so the task is suspended by then: no report.
# Exits 1 when the sanitizer reports a race.
set -eu
work=$(mktemp -d /tmp/herald-tsan-continuation.XXXXXX)
trap 'rm -rf "$work"' EXIT
pause=''
[ "${1:-}" = "--await-first" ] && pause='usleep(2000)'
cat > "$work/main.swift" <<EOF
import Foundation

final class Box: @unchecked Sendable {
    var value: Int
    init(_ value: Int) { self.value = value }
}
struct Carrier: @unchecked Sendable { let box: Box }

@main struct Probe {
    static func main() async {
        var total = 0
        for round in 0..<300 {
            let carrier = await withCheckedContinuation { (continuation: CheckedContinuation<Carrier, Never>) in
                Thread {
                    let box = Box(round)  // written on this thread
                    $pause
                    continuation.resume(returning: Carrier(box: box))
                }.start()
            }
            total += carrier.box.value  // read by the task, after the resume
        }
        print("read \(total)")
    }
}
EOF
swiftc -sanitize=thread -parse-as-library -O "$work/main.swift" -o "$work/probe"
if TSAN_OPTIONS=halt_on_error=1 "$work/probe" > "$work/out" 2>&1; then
    cat "$work/out"
    echo "no report"
else
    grep -m1 'WARNING: ThreadSanitizer' "$work/out"
    exit 1
fi
