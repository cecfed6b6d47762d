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
  POST /ws {"ignore_pings":true, "drop_after":N, "hold_at":N|null, "drop_now":true, "raw":[{"size":N} | {"bad_utf8":true} | {"text":"…"} | {"opcode":N}]}
           hold_at: send events only up to that count; drop_now: cut every open connection (no close frame)
  GET  /log  -> {"requests":[...], "hooks":[...], "connections":[...], "events":N}

Also: --expired-cert DIR --ca-cert F --ca-key F writes DIR/expired.pem/.key, a localhost certificate
signed by that CA whose validity ended yesterday (needs the `cryptography` package).
Only the standard library otherwise.
"""
import argparse
import datetime
import json
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from upstream_rest import RESTHandler
from upstream_state import STATE, preload
from upstream_ws import ThreadingTCPServer, WSHandler


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
                STATE.modified_at += 1
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
    parser.add_argument("--validators", choices=["etag", "last-modified"], default="etag", help="how REST pages are validated")
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
    STATE.validators = args.validators
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
