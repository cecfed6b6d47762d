#!/usr/bin/env python3
"""Counts the CPU instructions Herald spends per message, under callgrind.

Wall-clock figures on a shared VM move by 20-40% from run to run; an instruction count does not, so it
shows whether a change to the hot path made it cheaper. This runs `herald-bench --router-only` (normalise
N payloads, then route + commit them in-process in batches) under valgrind's callgrind and prints, per
message, the instructions inside `EventPayloadDecoder.decode` (normalising one JSON payload) and inside
`EventRouter.commit` (routing, the store's SQL and the commit), with the heaviest functions below. A batch of
256 new messages or more is applied on the router's apply queue while the commit's thread inserts its
messages; that work runs outside `EventRouter.commit`'s frame, so it is counted apart and added in.

Instructions are not time (cache misses, system calls and the disk are not in them), so measure the
result with `make bench` as well.

Usage: Tests/Tools/count_instructions.py [HERALD_BENCH] [--messages N] [--batch N] [--members N] [--top K]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Each phase: its label, the function whose frame holds it, and any work it hands to another thread (the
# commit's apply on the apply queue, BackgroundWork.start's closure), counted apart and added in.
PHASES = [
    ("normalise (EventPayloadDecoder.decode)", re.compile(r"EventPayloadDecoderV6decode_2as8bindings"), None),
    # The public commit and the private one that defers durability (a file-private name: `commit33_…LL_`).
    ("route + commit (EventRouter.commit)", re.compile(r"EventRouterC6commit(33_[0-9A-F]+LL)?_11checkpoints"),
     ("in the apply on the apply queue", re.compile(r"BackgroundWorkC5start2on_.*AppliedBatch"))),
]
LINE = re.compile(r"^\s*([\d,]+)\s+\([\s\d.]+%\)\s+(?:\*\s+)?\S*?:(\S+)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench", nargs="?", default=".build/release/herald-bench")
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--batch", type=int, default=3000)
    parser.add_argument("--members", type=int, default=2, help="members per chat (2: direct chats; 5: groups of 4 recipients)")
    parser.add_argument("--top", type=int, default=15, help="heaviest functions to list (by own instructions)")
    options = parser.parse_args()
    for tool in ("valgrind", "callgrind_annotate", "objcopy"):
        if shutil.which(tool) is None:
            print(f"count_instructions: {tool} is not installed (apt-get install valgrind binutils)", file=sys.stderr)
            return 2
    if not os.path.exists(options.bench):
        print(f"count_instructions: {options.bench} not found; build it with "
              "`swift build -c release --product herald-bench`", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="herald-instructions") as work:
        # Valgrind 3.19 cannot read Swift's DWARF 5; the symbol table is enough for function names.
        binary = os.path.join(work, "herald-bench")
        subprocess.run(["objcopy", "--strip-debug", options.bench, binary], check=True)
        output = os.path.join(work, "callgrind.out")
        print(f"… callgrind over {options.messages} messages in batches of {options.batch}, {options.members} members a chat "
              "(about a minute)", flush=True)
        run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={output}", binary,
                              "--router-only", "--messages", str(options.messages), "--batch", str(options.batch),
                              "--members", str(options.members)],
                             capture_output=True, text=True)
        if run.returncode != 0:
            print(run.stdout + run.stderr, file=sys.stderr)
            return 1
        inclusive = annotate(output, inclusive=True)
        own = annotate(output, inclusive=False)
    for label, pattern, handed in PHASES:
        # The outermost frame of the phase has the largest inclusive count; closures inside it match too.
        counts = [count for count, name in inclusive if pattern.search(name)]
        if not counts:
            print(f"{label}: no matching function (renamed?)", file=sys.stderr)
            return 1
        total, note = max(counts), ""
        if handed:
            where, handed_pattern = handed
            elsewhere = max([count for count, name in inclusive if handed_pattern.search(name)], default=0)
            total += elsewhere
            note = f" ({elsewhere / options.messages:,.0f} of them {where})" if elsewhere else ""
        print(f"{label}: {total / options.messages:,.0f} instructions per message{note}")
    print(f"\nheaviest functions by own instructions, per message:")
    for count, name in own[: options.top]:
        print(f"  {count / options.messages:>8,.0f}  {demangle(name)[:150]}")
    return 0


def annotate(path: str, inclusive: bool) -> list[tuple[int, str]]:
    text = subprocess.run(["callgrind_annotate", f"--inclusive={'yes' if inclusive else 'no'}", "--threshold=100", path],
                          capture_output=True, text=True, check=True).stdout
    rows = []
    for line in text.splitlines():
        match = LINE.match(line)
        if match and "PROGRAM TOTALS" not in line:
            rows.append((int(match.group(1).replace(",", "")), match.group(2)))
    return rows


def demangle(name: str) -> str:
    if not name.startswith("$s") or shutil.which("swift-demangle") is None:
        return name
    result = subprocess.run(["swift-demangle", "--simplified", "--compact", name], capture_output=True, text=True)
    return result.stdout.strip() or name


if __name__ == "__main__":
    sys.exit(main())
