#!/usr/bin/env python3
"""Herald exec plugin (protocol 1): tails a JSON-lines file of events and sends each to Herald.

Each line of --file is one event in Herald's payload shape with a "type", e.g.
  {"type":"message.received","chat":"c1","id":"m1","from":"alice","to":["bob"],"body":"hi","sent_at":1763800000000}
The plugin remembers in --state how far Herald has acknowledged (ack = committed, nack = dead-lettered),
and starts from there after a restart, so nothing is lost and nothing is acknowledged before Herald has it.
Standard library only. See plugins/exec/PROTOCOL.md.
"""
import argparse
import json
import os
import sys
import threading
import time


def log(message):
    print(message, file=sys.stderr, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", required=True, help="JSON-lines file of events to follow")
    parser.add_argument("--state", required=True, help="file holding the acknowledged byte offset")
    parser.add_argument("--stats", help="write counters here as JSON when done (for tests)")
    parser.add_argument("--crash-after", type=int, default=0, help="exit abruptly after sending N events (tests)")
    parser.add_argument("--crash-marker", help="crash only if this file does not exist yet; create it (tests)")
    args = parser.parse_args()

    hello = json.loads(sys.stdin.readline())
    if hello.get("protocol") != 1:
        log("unsupported protocol %r" % hello)
        return 2
    print(json.dumps({"protocol": 1, "name": "jsonl-tail"}), flush=True)

    offset = int(open(args.state).read() or 0) if os.path.exists(args.state) else 0
    lock = threading.Lock()
    pending = {}          # seq -> end offset of its line
    handled = set()
    counters = {"sent": 0, "acked": 0, "nacked": 0, "max_outstanding": 0}
    state = {"offset": offset, "next_to_commit": 1}

    def save_progress():
        # Advance the saved offset over the contiguous run of handled sequence numbers.
        while state["next_to_commit"] in handled:
            seq = state["next_to_commit"]
            handled.discard(seq)
            state["offset"] = pending.pop(seq)
            state["next_to_commit"] += 1
        with open(args.state + ".tmp", "w") as handle:
            handle.write(str(state["offset"]))
        os.replace(args.state + ".tmp", args.state)

    def read_answers():
        # Only this thread watches stdin, so whatever ends it ends the plugin: otherwise the main loop would
        # go on following the file for nobody once Herald is gone.
        try:
            for line in sys.stdin:
                answer = json.loads(line)
                with lock:
                    if "ack" in answer:
                        counters["acked"] += 1
                        handled.add(answer["ack"])
                    elif "nack" in answer:
                        counters["nacked"] += 1
                        handled.add(answer["nack"])
                        log("event %d dead-lettered: %s" % (answer["nack"], answer.get("reason")))
                    save_progress()
        except Exception as error:  # a torn last line from a Herald that was killed, a state file gone
            log("stopping: %s" % error)
            os._exit(1)
        os._exit(0)  # stdin closed: Herald is shutting down

    threading.Thread(target=read_answers, daemon=True).start()

    seq = 0
    position = offset
    with open(args.file, "rb") as source:
        source.seek(position)
        while True:
            line = source.readline()
            if not line or not line.endswith(b"\n"):
                source.seek(position)
                if args.stats:
                    with lock, open(args.stats, "w") as handle:
                        json.dump(counters, handle)
                time.sleep(0.05)
                continue
            position += len(line)
            text = line.decode("utf-8").strip()
            if not text:
                continue
            try:
                json.loads(text)
                event = text
            except ValueError:
                # Not JSON: pass it on wrapped, so Herald dead-letters it with a reason and the offset moves on.
                event = json.dumps({"type": "invalid", "raw": text})
            seq += 1
            with lock:
                pending[seq] = position
                counters["sent"] += 1
                outstanding = counters["sent"] - counters["acked"] - counters["nacked"]
                counters["max_outstanding"] = max(counters["max_outstanding"], outstanding)
            sys.stdout.write('{"seq":%d,"event":%s}\n' % (seq, event))
            sys.stdout.flush()
            if args.crash_after and seq >= args.crash_after and not (args.crash_marker and os.path.exists(args.crash_marker)):
                if args.crash_marker:
                    open(args.crash_marker, "w").close()
                log("crashing on purpose after %d events" % seq)
                os._exit(3)


if __name__ == "__main__":
    sys.exit(main())
