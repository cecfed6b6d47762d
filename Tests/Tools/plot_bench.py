#!/usr/bin/env python3
"""Draws the figures of one `make bench` (herald-bench --json, JSON lines) as the PNGs docs/benchmarks.md embeds.

- throughput.png: Herald's backlog drains (the MQTT sink delivering every output meanwhile, and the sink down with
  outputs queued) and live intake beside mosquitto_sub's in the same run, for each store and
  chat size measured, with the ratio written on each Herald bar, and the plain Python bridge's backlog drain where
  the run measured it;
- latency.png: publish→notification p50 and p99 (the MQTT sink delivering every output) at each publish rate,
  per store and chat shape, beside the plain subscriber's p99 on the same broker.

Usage: plot_bench.py FIGURES.jsonl OUTPUT_DIR
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def setup_name(row):
    store = "SQLite" if row["store"] == "sqlite" else "PostgreSQL"
    chats = "direct chats" if row["members"] == 2 else f"{row['members']}-member\ngroups"
    return f"{store}\n{chats}"


def throughput(rows, output):
    # One group of bars per (setup, phase) that has both Herald and mosquitto_sub.
    groups = []
    for setup in dict.fromkeys(setup_name(r) for r in rows if r["kind"] == "throughput"):
        # Herald's backlog drains (the sink delivering, and outputs queued) share mosquitto_sub's and the
        # Python bridge's drain of the same backlog.
        for phase, label in (("backlog-delivering", "backlog,\nsink delivering"), ("backlog", "backlog,\noutputs queued"), ("live", "live")):
            def rate(subject):
                wanted = "backlog" if subject != "herald" and phase.startswith("backlog") else phase
                found = [r["rate"] for r in rows if r["kind"] == "throughput" and setup_name(r) == setup
                         and r["phase"] == wanted and r["subject"] == subject]
                return found[-1] if found else None
            herald, baseline = rate("herald"), rate("mosquitto_sub")
            if herald and not baseline and phase == "live":
                # The quick runs measure mosquitto_sub's backlog only; the live baseline is the full run's.
                baseline = next((r["rate"] for r in rows if r["kind"] == "throughput" and r["phase"] == "live"
                                 and r["subject"] == "mosquitto_sub"), None)
            if herald and baseline:
                groups.append((f"{setup}\n{label}", herald, baseline, rate("python-bridge") if phase != "live" else None))
    if not groups:
        return None
    figure, axes = plt.subplots(figsize=(max(10, 1.2 * len(groups)), 4.8))
    positions = range(len(groups))
    width = 0.27
    axes.bar([p - width for p in positions], [g[2] for g in groups], width, label="mosquitto_sub (C client)", color="#9aa5b1")
    bars = axes.bar(list(positions), [g[1] for g in groups], width, label="Herald", color="#2f6fb0")
    for bar, group in zip(bars, groups):
        axes.annotate(f"{group[1] / group[2]:.2f}×", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                      ha="center", va="bottom", fontsize=9)
    # The plain Python bridge, where the run measured it (SQLite backlog drains).
    python = [(p, g[3]) for p, g in zip(positions, groups) if g[3]]
    if python:
        axes.bar([p + width for p, _ in python], [rate for _, rate in python], width,
                 label="Python bridge (paho-mqtt + sqlite3)", color="#e3a32b")
    axes.set_xticks(list(positions), [g[0] for g in groups], fontsize=8)
    axes.set_ylabel("messages per second")
    axes.set_ylim(0, max(max(g[1], g[2]) for g in groups) * 1.3)  # room for the legend above the bars
    axes.set_title(f"Throughput, {rows[0]['messages']:,} QoS 1 messages, {rows[0]['cores']} cores (same run, same broker)")
    axes.legend()
    axes.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    path = os.path.join(output, "throughput.png")
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def latency(rows, output):
    measured = [r for r in rows if r["kind"] == "latency" and r.get("sink_delivering")]
    if not measured:
        return None
    figure, axes = plt.subplots(figsize=(12, 4.8))
    styles = {("sqlite", 2): ("#2f6fb0", "SQLite"), ("postgres", 2): ("#c0504d", "PostgreSQL"),
              ("sqlite", 5): ("#6aa84f", "SQLite, 5-member groups"), ("postgres", 5): ("#e3a32b", "PostgreSQL, 5-member groups")}
    for (store, members), (colour, label) in styles.items():
        points = sorted((r for r in measured if r["store"] == store and r.get("members", 2) == members), key=lambda r: r["rate"])
        if not points:
            continue
        rates = [p["rate"] for p in points]
        axes.plot(rates, [p["notification_p50_ms"] for p in points], "o--", color=colour, label=f"{label} p50")
        axes.plot(rates, [p["notification_p99_ms"] for p in points], "o-", color=colour, label=f"{label} p99")
        axes.plot(rates, [p["broker_p99_ms"] for p in points], "x:", color=colour, alpha=0.6,
                  label=f"plain subscriber p99 ({label} runs)")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("publish rate, messages per second (even load)")
    axes.set_ylabel("publish → notification, ms")
    axes.set_title("Latency with the MQTT sink delivering every output")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the plot, clear of the lines
    figure.tight_layout()
    path = os.path.join(output, "latency.png")
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1])
        return 2
    rows = load(sys.argv[1])
    os.makedirs(sys.argv[2], exist_ok=True)
    for path in (throughput(rows, sys.argv[2]), latency(rows, sys.argv[2])):
        if path:
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
