"""REST pages with ETags and cursors, and a webhook receiver (see chat_server.py)."""
import hashlib
import json
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlparse

from upstream_state import STATE


class RESTHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self, status):
        with STATE.lock:
            STATE.requests.append({"method": self.command, "path": self.path, "status": status,
                                   "if_none_match": self.headers.get("If-None-Match"),
                                   "if_modified_since": self.headers.get("If-Modified-Since"),
                                   "authorization": self.headers.get("Authorization"), "time": time.time()})

    def reply(self, status, body=b"", headers=None):
        self.record(status)
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def take_fault(self):
        with STATE.lock:
            return STATE.faults.pop(0) if STATE.faults else None

    def do_GET(self):
        url = urlparse(self.path)
        query = parse_qs(url.query)
        fault = self.take_fault()
        if fault:
            if fault.get("garbage"):
                return self.reply(200, b"<html>this is not the JSON you are looking for", {"Content-Type": "text/html"})
            headers = {"Retry-After": fault["retry_after"]} if "retry_after" in fault else {}
            return self.reply(fault["status"], b'{"error":"injected"}', headers)
        with STATE.lock:
            events = list(STATE.events)
            size = STATE.page_size
        if url.path == "/events":
            cursor = int(query.get("cursor", ["0"])[0])
            items = events[cursor:cursor + size]
            body = json.dumps({"items": items, "next_cursor": str(cursor + len(items))}).encode()
            headers = {"Content-Type": "application/json"}
        elif url.path == "/linked":
            page = int(query.get("page", ["0"])[0])
            items = events[page * size:(page + 1) * size]
            body = json.dumps(items).encode()
            headers = {"Content-Type": "application/json"}
            if (page + 1) * size < len(events):
                headers["Link"] = f'</linked?page={page + 1}>; rel="next"'
        else:
            return self.reply(404)
        if STATE.validators == "last-modified":
            # Last-Modified: when the events last changed (seconds resolution, as HTTP dates are).
            modified = formatdate(STATE.modified_at, usegmt=True)
            if self.headers.get("If-Modified-Since") == modified:
                return self.reply(304, b"", {"Last-Modified": modified})
            headers["Last-Modified"] = modified
            return self.reply(200, body, headers)
        etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
        if self.headers.get("If-None-Match") == etag:
            return self.reply(304, b"", {"ETag": etag})
        headers["ETag"] = etag
        self.reply(200, body, headers)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if not self.path.startswith("/hooks/"):
            return self.reply(404)
        name = self.path[len("/hooks/"):]
        with STATE.lock:
            if STATE.hook_responses:
                response = STATE.hook_responses.pop(0)
            elif name in STATE.hook_status:
                response = {"status": STATE.hook_status[name]}
            else:
                response = {"status": 200, "delay": STATE.hook_delay}
            STATE.hooks_in_flight += 1
            STATE.hooks.append({"name": name, "status": response["status"],
                                "in_flight": STATE.hooks_in_flight,
                                "id": self.headers.get("webhook-id"), "timestamp": self.headers.get("webhook-timestamp"),
                                "signature": self.headers.get("webhook-signature"),
                                "authorization": self.headers.get("Authorization"), "body": body.decode("utf-8", "replace"),
                                "time": time.time()})
            delay = response.get("delay", 0)
        if delay:
            time.sleep(delay)
        headers = {"Retry-After": response["retry_after"]} if "retry_after" in response else {}
        with STATE.lock:
            STATE.hooks_in_flight -= 1
        self.reply(response["status"], b"ok", headers)
