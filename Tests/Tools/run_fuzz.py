#!/usr/bin/env python3
"""Runs each fuzz target of herald-fuzz (built with libFuzzer) for a while and prints a summary.

usage: run_fuzz.py BINARY SECONDS [--seed N] [TARGET ...]

Each target starts from its committed seed corpus (Tests/Fuzz/Corpus/TARGET) and grows a working copy in
.build-fuzz/corpus/TARGET, so what it finds carries over between runs without touching the repository.
A crash or a broken property stops that target; its input is saved in .build-fuzz/artifacts/TARGET/ and
this script exits 1 after printing every target's figures. Add a saved input to the seed corpus once
it is fixed: `make test` replays the corpus, so it stays a regression test.
"""
import os
import re
import shutil
import subprocess
import sys
import time

TARGETS = ["json", "payload", "mqtt-topic", "websocket", "rest-page", "exec-line", "tail-filter", "config"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(binary, target, seconds, seed):
    seeds = os.path.join(ROOT, "Tests/Fuzz/Corpus", target)
    work = os.path.join(ROOT, ".build-fuzz/corpus", target)
    artifacts = os.path.join(ROOT, ".build-fuzz/artifacts", target) + "/"
    os.makedirs(work, exist_ok=True)
    os.makedirs(artifacts, exist_ok=True)
    for name in os.listdir(seeds):
        shutil.copy(os.path.join(seeds, name), os.path.join(work, "seed-" + name))
    environment = dict(os.environ, HERALD_FUZZ_TARGET=target, SWIFT_BACKTRACE="enable=no",
                       ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1")
    arguments = [binary, f"-max_total_time={seconds}", "-print_final_stats=1", "-max_len=8192", "-timeout=10",
                 "-rss_limit_mb=2048", f"-artifact_prefix={artifacts}", work]
    if seed is not None:
        arguments.insert(1, f"-seed={seed}")
    started = time.time()
    result = subprocess.run(arguments, env=environment, capture_output=True, text=True, errors="replace")
    output = result.stderr + result.stdout
    elapsed = time.time() - started
    executions = re.findall(r"stat::number_of_executed_units:\s*(\d+)", output)
    coverage = re.findall(r"\bcov: (\d+) ft: (\d+) corp: (\d+)", output)
    failure = None
    if result.returncode != 0:
        lines = [line for line in output.splitlines() if "Fatal error" in line or "ERROR: " in line or "SUMMARY:" in line
                 or line.startswith("input (")]
        saved = re.findall(r"Test unit written to (\S+)", output)
        failure = " | ".join(lines[:3]) + (f" | saved {saved[-1]}" if saved else "")
    return {
        "target": target,
        "executions": int(executions[-1]) if executions else 0,
        "coverage": int(coverage[-1][0]) if coverage else 0,
        "features": int(coverage[-1][1]) if coverage else 0,
        "corpus": int(coverage[-1][2]) if coverage else 0,
        "seconds": elapsed,
        "failure": failure,
    }


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    binary, seconds = sys.argv[1], int(sys.argv[2])
    rest = sys.argv[3:]
    seed = None
    if rest[:1] == ["--seed"]:
        seed, rest = int(rest[1]), rest[2:]
    targets = rest or TARGETS
    results = []
    for target in targets:
        print(f"… fuzzing {target} for {seconds} s", flush=True)
        results.append(run(binary, target, seconds, seed))
    print(f"\n{'target':<12} {'executions':>11} {'exec/s':>8} {'coverage':>9} {'features':>9} {'corpus':>7}  result")
    for r in results:
        rate = r["executions"] / r["seconds"] if r["seconds"] else 0
        status = "FAILED: " + r["failure"] if r["failure"] else "ok"
        print(f"{r['target']:<12} {r['executions']:>11,} {rate:>8,.0f} {r['coverage']:>9,} {r['features']:>9,} {r['corpus']:>7,}  {status}")
    return 1 if any(r["failure"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
