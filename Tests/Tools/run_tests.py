#!/usr/bin/env python3
"""Runs a test command with a deadline, shows its output as it comes, and names what hangs.

usage: run_tests.py --log FILE --deadline SECONDS -- COMMAND ...

The command's output goes to this terminal and to FILE line by line (the test binary's stdout is made
line-buffered, so a run that is stopped has shown everything it printed). At the end a failed run lists
its failures (the lines with ✘) again, so a log read from its end names them.

If the command has not finished by the deadline, the script prints the processes the run has started,
every thread's stack of each test binary (with gdb, when it is installed) and, last, the tests that
started and did not finish, then stops the whole run and exits 124. A hung test then fails the run in minutes with
its name, instead of holding it until an outer time limit kills it with nothing to show.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

STARTED = re.compile(r"◇ Test (.+?) started\.")
ENDED = re.compile(r"^[✔✘➜] Test (.+?) (?:with \d+ test cases? )?(?:passed|failed|skipped)\b")


def descendants(root):
    """The process ids below `root`, from /proc's parent links."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, queue = [], [root]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def command_line(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def report_hang(process, running, out):
    """What a run that passed its deadline was doing: its processes, the test binaries' stacks, then the open
    tests, last, where a log read from its end shows them."""
    pids = descendants(process.pid)
    out("\nThe run passed its deadline. Processes of the run:")
    for pid in pids:
        out(f"  {pid}  {command_line(pid)[:200]}")
    binaries = [pid for pid in pids if ".xctest" in command_line(pid).split(" ")[0]]
    if not shutil.which("gdb"):
        out("gdb is not installed, so no stacks.")
    for pid in binaries if shutil.which("gdb") else []:
        out(f"Stacks of {pid} ({command_line(pid)[:120]}):")
        dump = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt 40"],
                              capture_output=True, text=True, errors="replace", timeout=300)
        for line in dump.stdout.splitlines():
            if line.startswith(("Thread ", "#")):
                out("  " + line[:240])
    open_tests = sorted((name, start) for name, starts in running.items() for start in starts)
    out(f"Tests started and not finished ({len(open_tests)}):")
    for name, start in open_tests:
        out(f"  {name}  (running for {time.time() - start:.0f} s)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    parser.add_argument("--deadline", type=float, required=True, help="seconds")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    arguments = parser.parse_args()
    command = arguments.command[1:] if arguments.command[:1] == ["--"] else arguments.command
    log = open(arguments.log, "w", encoding="utf-8")
    lock = threading.Lock()

    def out(line):
        with lock:
            print(line, flush=True)
            log.write(line + "\n")
            log.flush()

    # stdbuf's preload reaches the test binary through the environment: its stdout becomes line-buffered.
    process = subprocess.Popen(["stdbuf", "-oL", "-eL"] + command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               start_new_session=True)
    running, failures = {}, []

    def read():
        for raw in process.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            out(line)
            started, ended = STARTED.search(line), ENDED.search(line)
            # Tests of different suites may share a name: each start is kept until an end of that name.
            if started:
                running.setdefault(started.group(1), []).append(time.time())
            elif ended and running.get(ended.group(1)):
                running[ended.group(1)].pop(0)
            if "✘" in line:
                failures.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        status = process.wait(timeout=arguments.deadline)
    except subprocess.TimeoutExpired:
        report_hang(process, running, out)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        reader.join(timeout=10)
        for line in failures[:60]:
            out(line)
        out(f"Stopped after {arguments.deadline:.0f} s, the tests above unfinished.")
        return 124
    reader.join()
    if status != 0 and failures:
        out(f"\nFailed tests and their issues (whole output: {arguments.log}):")
        for line in failures[:60]:
            out(line)
    return status


if __name__ == "__main__":
    sys.exit(main())
