"""A WebSocket event stream, hand-rolled so tests control pings, drops and raw frames (see chat_server.py)."""
import base64
import hashlib
import json
import socket
import socketserver
import ssl
import struct
import threading
import time
from urllib.parse import parse_qs, urlparse

from upstream_state import STATE

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


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
                    if "opcode" in raw:
                        send(frame(raw["opcode"], b"reserved"))
                    elif "text" in raw:
                        send(frame(0x1, raw["text"].encode()))
                    elif raw.get("bad_utf8"):
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
