#!/usr/bin/env python3
"""Real upstream servers for Herald's HTTP-based adapters, for tests and `make bench`.

One process serves one data port and one control port, both on 127.0.0.1:

  --mode rest   HTTP(S): GET /events?cursor=N (cursor pages with ETags), GET /linked?page=N
                (Link: rel="next" pages), POST /hooks/<name> (a webhook receiver).
  --mode ws     WebSocket(S) at any path: streams the events after ?since=N (or Last-Event-ID),
                each with "event_id": its 1-based index, answers pings and {"type":"ping"} messages.

The control port (plain HTTP, JSON) changes behaviour while it runs and reports what happened:
  POST /append {"events":[...]}                 events to serve
  POST /faults {"faults":[{"status":429,"retry_after":"1"}, {"garbage":true}, ...]}   next REST answers
  POST /hook_responses {"responses":[{"status":503,"retry_after":"1"}, {"status":410}]}   next webhook answers
  POST /hook_status {"notify":410}              a status every answer of /hooks/notify has from now on
  POST /ws {"ignore_pings":true, "drop_after":N, "hold_at":N|null, "drop_now":true, "raw":[{"size":N} | {"bad_utf8":true}]}
           hold_at: send events only up to that count; drop_now: cut every open connection (no close frame)
  GET  /log  -> {"requests":[...], "hooks":[...], "connections":[...], "events":N}

Also: --expired-cert DIR --ca-cert F --ca-key F writes DIR/expired.pem/.key, a localhost certificate
signed by that CA whose validity ended yesterday (needs the `cryptography` package).
Only the standard library otherwise.
"""
import argparse
import base64
import datetime
import hashlib
import json
import socket
import socketserver
import ssl
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


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


# ---------------------------------------------------------------- REST ----------------------------------------------------

class RESTHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self, status):
        with STATE.lock:
            STATE.requests.append({"method": self.command, "path": self.path, "status": status,
                                   "if_none_match": self.headers.get("If-None-Match"),
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


# ---------------------------------------------------------------- WebSocket -----------------------------------------------

def frame(opcode, payload):
    header = bytes([0x80 | opcode])
    length = len(payload)
    if length < 126:
        header += bytes([length])
    elif length < 65536:
        header += bytes([126]) + struct.pack("!H", length)
    else:
        header += bytes([127]) + struct.pack("!Q", length)
    return header + payload


def read_exact(sock, count):
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def read_frame(sock):
    first, second = read_exact(sock, 2)
    opcode = first & 0x0F
    length = second & 0x7F
    if length == 126:
        length = struct.unpack("!H", read_exact(sock, 2))[0]
    elif length == 127:
        length = struct.unpack("!Q", read_exact(sock, 8))[0]
    mask = read_exact(sock, 4) if second & 0x80 else b"\0\0\0\0"
    payload = bytearray(read_exact(sock, length))
    for index in range(length):
        payload[index] ^= mask[index % 4]
    return opcode, bytes(payload)


class WSHandler(socketserver.BaseRequestHandler):
    context = None

    def handle(self):
        sock = self.request
        if self.context:
            try:
                sock = self.context.wrap_socket(sock, server_side=True)
            except (ssl.SSLError, OSError) as error:
                with STATE.lock:
                    STATE.connections.append({"tls_error": str(error), "time": time.time()})
                return
        request = b""
        while b"\r\n\r\n" not in request:
            chunk = sock.recv(4096)
            if not chunk:
                return
            request += chunk
        lines = request.split(b"\r\n\r\n")[0].decode().split("\r\n")
        path = lines[0].split(" ")[1]
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        query = parse_qs(urlparse(path).query)
        since = int(query.get("since", [headers.get("last-event-id", "0")])[0] or 0)
        accept = base64.b64encode(hashlib.sha1((headers.get("sec-websocket-key", "") + GUID).encode()).digest()).decode()
        response = ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    f"Sec-WebSocket-Accept: {accept}\r\n")
        if "sec-websocket-protocol" in headers:
            response += f"Sec-WebSocket-Protocol: {headers['sec-websocket-protocol'].split(',')[0].strip()}\r\n"
        sock.sendall((response + "\r\n").encode())
        peer = sock.getpeercert() if isinstance(sock, ssl.SSLSocket) else None
        client = dict(item[0] for item in peer.get("subject", ())).get("commonName") if peer else None
        record = {"path": path, "since": since, "client_cn": client, "authorization": headers.get("authorization"),
                  "protocol": headers.get("sec-websocket-protocol"), "last_event_id": headers.get("last-event-id"),
                  "messages": [], "time": time.time()}
        with STATE.lock:
            STATE.connections.append(record)
        closed = threading.Event()
        write_lock = threading.Lock()

        def send(data):
            with write_lock:
                sock.sendall(data)

        def reader():
            try:
                while not closed.is_set():
                    opcode, payload = read_frame(sock)
                    if opcode == 0x9:
                        with STATE.lock:
                            ignore = STATE.ignore_pings
                        if not ignore:
                            send(frame(0xA, payload))
                    elif opcode == 0x8:
                        with STATE.lock:
                            record["close_code"] = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                        try:
                            send(frame(0x8, payload[:2]))
                        except OSError:
                            pass
                        break
                    elif opcode == 0x1:
                        text = payload.decode("utf-8", "replace")
                        with STATE.lock:
                            record["messages"].append(text)
                            ignore = STATE.ignore_pings
                        if '"ping"' in text and not ignore:
                            send(frame(0x1, b'{"type":"pong"}'))
            except (ConnectionError, OSError, ValueError):
                pass
            closed.set()

        threading.Thread(target=reader, daemon=True).start()
        sent = since
        on_this_connection = 0
        with STATE.lock:
            generation = STATE.generation
        try:
            while not closed.is_set():
                with STATE.lock:
                    if STATE.generation != generation:
                        sock.shutdown(socket.SHUT_RDWR)
                        break
                    raw = STATE.raw.pop(0) if STATE.raw else None
                    limit = len(STATE.events) if STATE.hold_at is None else min(STATE.hold_at, len(STATE.events))
                    pending = STATE.events[sent:min(sent + 2000, limit)] if sent < limit else []
                    drop_after = STATE.drop_after
                    if not pending and raw is None:
                        STATE.lock.wait(0.05)
                        continue
                if raw is not None:
                    if raw.get("bad_utf8"):
                        send(frame(0x1, b'{"type":"message.received","body":"\xff\xfe"}'))
                    else:
                        send(frame(0x1, b'"' + b"x" * max(raw["size"] - 2, 0) + b'"'))
                    continue
                if drop_after is not None and on_this_connection + len(pending) >= drop_after:
                    pending = pending[:max(drop_after - on_this_connection, 0)]
                chunk = b"".join(frame(0x1, json.dumps(dict(event, event_id=str(sent + offset + 1))).encode())
                                 for offset, event in enumerate(pending))
                send(chunk)
                sent += len(pending)
                on_this_connection += len(pending)
                if drop_after is not None and on_this_connection >= drop_after:
                    with STATE.lock:
                        STATE.drop_after = None
                    sock.shutdown(socket.SHUT_RDWR)
                    break
            closed.wait(5)
        except OSError:
            pass
        finally:
            closed.set()
            try:
                sock.close()
            except OSError:
                pass


class ThreadingTCPServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


# ---------------------------------------------------------------- control -------------------------------------------------

class ControlHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, payload):
        body = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.answer(STATE.snapshot())

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        with STATE.lock:
            if self.path == "/append":
                STATE.events.extend(body["events"])
            elif self.path == "/faults":
                STATE.faults.extend(body["faults"])
            elif self.path == "/hook_responses":
                STATE.hook_responses.extend(body["responses"])
            elif self.path == "/hook_status":
                STATE.hook_status.update(body)
            elif self.path == "/ws":
                STATE.ignore_pings = body.get("ignore_pings", STATE.ignore_pings)
                STATE.drop_after = body.get("drop_after", STATE.drop_after)
                STATE.hold_at = body.get("hold_at", STATE.hold_at)
                if body.get("drop_now"):
                    STATE.generation += 1
                STATE.raw.extend(body.get("raw", []))
            STATE.lock.notify_all()
        self.answer({"ok": True})


def expired_certificate(directory, ca_cert, ca_key):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    with open(ca_cert, "rb") as handle:
        issuer = x509.load_pem_x509_certificate(handle.read())
    with open(ca_key, "rb") as handle:
        issuer_key = serialization.load_pem_private_key(handle.read(), password=None)
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
                   .issuer_name(issuer.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=10)).not_valid_after(now - datetime.timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
                   .sign(issuer_key, hashes.SHA256()))
    with open(f"{directory}/expired.pem", "wb") as handle:
        handle.write(certificate.public_bytes(serialization.Encoding.PEM))
    with open(f"{directory}/expired.key", "wb") as handle:
        handle.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=["rest", "ws"])
    parser.add_argument("--port", type=int)
    parser.add_argument("--control-port", type=int)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--max-tls", choices=["1.1", "1.2", "1.3"])
    parser.add_argument("--client-ca", help="require a client certificate signed by this CA (mutual TLS)")
    parser.add_argument("--page-size", type=int, default=100)
    parser.add_argument("--preload", type=int, default=0, help="synthetic messages to serve from the start")
    parser.add_argument("--chats", type=int, default=1000)
    parser.add_argument("--members", type=int, default=2)
    parser.add_argument("--hook-delay", type=float, default=0, help="seconds every webhook answer takes (a slow receiver)")
    parser.add_argument("--expired-cert")
    parser.add_argument("--ca-cert")
    parser.add_argument("--ca-key")
    args = parser.parse_args()
    if args.expired_cert:
        expired_certificate(args.expired_cert, args.ca_cert, args.ca_key)
        return
    STATE.page_size = args.page_size
    STATE.hook_delay = args.hook_delay
    STATE.events = preload(args.preload, args.chats, args.members)
    context = None
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
        if args.client_ca:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(args.client_ca)
        if args.max_tls == "1.1":
            context.set_ciphers("DEFAULT:@SECLEVEL=0")
            context.minimum_version = ssl.TLSVersion.TLSv1
            context.maximum_version = ssl.TLSVersion.TLSv1_1
        elif args.max_tls == "1.2":
            context.maximum_version = ssl.TLSVersion.TLSv1_2
    control = ThreadingHTTPServer(("127.0.0.1", args.control_port), ControlHandler)
    threading.Thread(target=control.serve_forever, daemon=True).start()
    if args.mode == "rest":
        server = ThreadingHTTPServer(("127.0.0.1", args.port), RESTHandler)
        server.daemon_threads = True
        if context:
            server.socket = context.wrap_socket(server.socket, server_side=True)
    else:
        WSHandler.context = context
        server = ThreadingTCPServer(("127.0.0.1", args.port), WSHandler)
    print(f"listening on {args.port} (control {args.control_port})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
