"""Shared state of the test upstream servers (see chat_server.py)."""
import threading
import time


class State:
    def __init__(self, page_size):
        self.lock = threading.Condition()
        self.page_size = page_size
        self.events = []
        self.requests = []
        self.faults = []
        self.hooks = []
        self.hook_responses = []
        self.connections = []
        self.ignore_pings = False
        self.drop_after = None
        self.hold_at = None
        self.generation = 0
        self.raw = []
        self.hook_delay = 0
        self.hooks_in_flight = 0
        self.hook_status = {}
        self.validators = "etag"
        self.modified_at = int(time.time()) - 3600

    def snapshot(self):
        with self.lock:
            return {"requests": list(self.requests), "hooks": list(self.hooks),
                    "connections": list(self.connections), "events": len(self.events)}


STATE = State(100)


def preload(count, chats, users_per_chat):
    """Synthetic message.received events, as the benchmark uses."""
    now = int(time.time() * 1000)
    events = []
    for index in range(count):
        chat = index % chats
        members = [f"u{chat * users_per_chat + k}" for k in range(users_per_chat)]
        events.append({"type": "message.received", "chat": f"c{chat}", "id": f"m{index}", "from": members[index % users_per_chat],
                       "to": members, "body": "hello there, this is a benchmark message of moderate length",
                       "sent_at": now + index})
    return events
