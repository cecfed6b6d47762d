#!/usr/bin/env python3
"""A plain Python MQTT-to-SQLite bridge: the baseline `make bench` sets Herald's backlog drain beside.

It is what a team would write first: paho-mqtt with a persistent session and manual QoS 1 acks, json,
and sqlite3 with batched commits. For each message it inserts the row (a duplicate row is skipped) and adds
one to the unread counter of every recipient; it acknowledges a batch only after its commit, in WAL mode
with `synchronous=FULL`, as Herald does with `durability: full`. It is a speed baseline, not a correct
bridge: a redelivered message still counts again, and it writes less than Herald (no memberships, read
positions, outbox or dead letters), so the comparison favours it.

Usage: python_bridge.py --port P --client-id ID --db PATH (--create | --count N) [--batch N]
  --create   connect, subscribe chats/+/messages at QoS 1 in a persistent session, and leave
  --count N  drain until N messages are committed, print the rate, and exit
"""

import argparse
import json
import sqlite3
import sys
import time

import paho.mqtt.client as mqtt


def open_store(path):
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("""CREATE TABLE IF NOT EXISTS messages(chat TEXT, id TEXT, sender TEXT, body TEXT, sent_at INTEGER,
                  PRIMARY KEY(chat, id))""")
    db.execute("CREATE TABLE IF NOT EXISTS unread(user TEXT, chat TEXT, count INTEGER, PRIMARY KEY(user, chat))")
    return db


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--client-id", required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--create", action="store_true")
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--batch", type=int, default=1000, help="messages per commit at most")
    options = parser.parse_args()

    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=options.client_id, clean_session=False,
                         manual_ack=True)
    subscribed = []
    client.on_subscribe = lambda *args: subscribed.append(True)
    client.connect("127.0.0.1", options.port, keepalive=60)
    client.subscribe("chats/+/messages", qos=1)
    if options.create:
        while not subscribed:
            client.loop(timeout=0.1)
        client.disconnect()
        return 0

    db = open_store(options.db)
    pending = []  # (mid, chat, payload) received, not yet committed
    client.on_message = lambda _client, _userdata, message: pending.append(
        (message.mid, message.topic.split("/")[1], message.payload))
    committed = 0
    started = time.monotonic()
    while committed < options.count:
        # Read while messages keep coming; commit when the batch is full or the socket has nothing more.
        before = len(pending)
        client.loop(timeout=0 if pending else 0.05)
        if not pending or (len(pending) < options.batch and len(pending) > before):
            continue
        batch, pending[:] = pending[:options.batch], pending[options.batch:]
        rows, unread = [], {}
        for _, chat, payload in batch:
            event = json.loads(payload)
            rows.append((chat, event["id"], event["from"], event["body"], event["sent_at"]))
            for user in event["to"]:
                unread[(user, chat)] = unread.get((user, chat), 0) + 1
        db.execute("BEGIN")
        db.executemany("INSERT OR IGNORE INTO messages VALUES (?,?,?,?,?)", rows)
        db.executemany("INSERT INTO unread VALUES (?,?,?) ON CONFLICT(user, chat) DO UPDATE SET count = count + excluded.count",
                       [(user, chat, count) for (user, chat), count in unread.items()])
        db.execute("COMMIT")
        for mid, _, _ in batch:
            client.ack(mid, 1)
        committed += len(batch)
    elapsed = time.monotonic() - started
    client.disconnect()
    print(f"{committed} messages in {elapsed:.2f} s: {committed / elapsed:.0f} msg/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
