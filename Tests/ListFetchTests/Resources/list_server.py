#!/usr/bin/python3
"""A misbehaving list server for the ListFetch tests.

Usage: list_server.py LOGFILE
Binds 127.0.0.1:0 and prints "PORT HOLEPORT" on stdout, then serves until killed. HOLEPORT is a
listener whose accept queue the script fills itself, so connections to it never complete (a
connect timeout on loopback). Every request is appended
to LOGFILE as one JSON line {"path": ..., "headers": {lowercased name: value}} before it is answered,
so a test that got a response can read what the server saw.
"""
import gzip
import json
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

LOG_PATH = sys.argv[1]
LOG_LOCK = threading.Lock()
COUNTERS = {}
COUNTER_LOCK = threading.Lock()

GOOD_LIST = b"# A small, valid list\nexample.com\nads.example.net\ntracker.example.org\n"
ETAG = '"list-v1"'
LAST_MODIFIED = "Wed, 21 Oct 2026 07:28:00 GMT"


def next_count(key):
    with COUNTER_LOCK:
        COUNTERS[key] = COUNTERS.get(key, 0) + 1
        return COUNTERS[key]


def hostnames(total_bytes):
    """Valid list text of exactly total_bytes bytes (lines of 'hNNNNNNN.example.com')."""
    out = bytearray()
    i = 0
    while len(out) < total_bytes:
        out += b"h%07d.example.com\n" % i
        i += 1
    return bytes(out[:total_bytes])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self):
        entry = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}}
        with LOG_LOCK, open(LOG_PATH, "a") as log:
            log.write(json.dumps(entry) + "\n")

    def send_body(self, status, body, headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.record()
        self.close_connection = True
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        parts = [p for p in url.path.split("/") if p]
        route = parts[0] if parts else ""
        getattr(self, "route_" + route.replace("-", "_"), self.route_missing)(parts, query)

    def route_missing(self, parts, query):
        self.send_body(404, b"no such route\n")

    # 200 with validators; 304 when the client's If-None-Match or If-Modified-Since matches.
    def route_etag(self, parts, query):
        if self.headers.get("If-None-Match") == ETAG:
            self.send_response(304)
            self.send_header("ETag", ETAG)
            self.end_headers()
            return
        self.send_body(200, GOOD_LIST, [("ETag", ETAG), ("Last-Modified", LAST_MODIFIED)])

    def route_lastmod(self, parts, query):
        if self.headers.get("If-Modified-Since") == LAST_MODIFIED:
            self.send_response(304)
            self.end_headers()
            return
        self.send_body(200, GOOD_LIST, [("Last-Modified", LAST_MODIFIED)])

    # A list that changes on every request: /seq/KEY serves n+1 hostnames on the nth request.
    def route_seq(self, parts, query):
        n = next_count("seq/" + "/".join(parts[1:]))
        body = "".join("v%d-host%d.example.com\n" % (n, i) for i in range(n + 1)).encode()
        self.send_body(200, body, [("ETag", '"seq-%d"' % n)])

    def route_status(self, parts, query):
        code = int(parts[1])
        self.send_body(code, b"<html><body>error %d</body></html>\n" % code)

    # /flaky/KEY/N: the first N requests for KEY fail with ?status= (500), later ones succeed.
    def route_flaky(self, parts, query):
        key, failures = parts[1], int(parts[2])
        if next_count("flaky/" + key) <= failures:
            headers = [("Retry-After", query["retry_after"])] if "retry_after" in query else []
            self.send_body(int(query.get("status", "500")), b"try later\n", headers)
        else:
            self.send_body(200, GOOD_LIST)

    # Headers and a few bytes, then silence until the client gives up.
    def route_stall(self, parts, query):
        self.send_response(200)
        self.send_header("Content-Length", "100000")
        self.end_headers()
        self.wfile.write(b"example.com\n")
        self.wfile.flush()
        time.sleep(30)

    # Promises 10000 bytes, sends 500, closes.
    def route_truncated(self, parts, query):
        self.send_response(200)
        self.send_header("Content-Length", "10000")
        self.end_headers()
        self.wfile.write(hostnames(500))
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_RDWR)

    # Chunked transfer coding: no length known up front (RFC 9112 §7.1).
    def route_big_chunked(self, parts, query):
        body = hostnames(int(query["bytes"]))
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for start in range(0, len(body), 16384):
            chunk = body[start:start + 16384]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.wfile.write(b"0\r\n\r\n")

    def route_big_length(self, parts, query):
        self.send_body(200, hostnames(int(query["bytes"])))

    # A body sent in pieces with pauses, for progress reports.
    def route_slow(self, parts, query):
        body = hostnames(int(query["bytes"]))
        pieces = int(query.get("pieces", "10"))
        delay = int(query.get("delay_ms", "50")) / 1000
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        step = max(1, len(body) // pieces)
        for start in range(0, len(body), step):
            self.wfile.write(body[start:start + step])
            self.wfile.flush()
            time.sleep(delay)

    def route_gzip(self, parts, query):
        size = int(query.get("bytes", "0"))
        plain = hostnames(size) if size else GOOD_LIST
        self.send_body(200, gzip.compress(plain), [("Content-Encoding", "gzip")])

    def route_bad_gzip(self, parts, query):
        self.send_body(200, b"this is not gzip at all\n" * 10, [("Content-Encoding", "gzip")])

    def route_loop(self, parts, query):
        self.send_body(302, b"", [("Location", "/loop")])

    # /redirect/N redirects N times, then serves the good list.
    def route_redirect(self, parts, query):
        n = int(parts[1])
        if n == 0:
            self.send_body(200, GOOD_LIST, [("ETag", ETAG)])
        else:
            self.send_body(302, b"", [("Location", "/redirect/%d" % (n - 1))])

    def route_redirect_file(self, parts, query):
        self.send_body(302, b"", [("Location", "file:///etc/hostname")])

    def route_garbage(self, parts, query):
        lines = ["<html>", "<head><title>Welcome</title></head>", "<body>", "Lorem ipsum dolor sit amet",
                 "!!! not a host !!!", "<script>var x = 1;</script>", "</body>", "</html>", "example.com"]
        self.send_body(200, ("\n".join(lines) + "\n").encode())

    def route_empty(self, parts, query):
        self.send_body(200, b"")

    def route_comments(self, parts, query):
        self.send_body(200, b"# only comments\n# nothing else\n")

    # Two bad lines among good ones: within a budget of 2.
    def route_some_bad(self, parts, query):
        self.send_body(200, b"example.com\nnot a host\nads.example.net\n<html>\ntracker.example.org\n")


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client hanging up mid-body is what several tests do on purpose (caps, cancellation).
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


def main():
    # The test runner spawns us with its own signal mask, which may block SIGTERM; undo that so
    # the test's terminate() ends the server.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    server = Server(("127.0.0.1", 0), Handler)
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(0)
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        try:
            filler.connect(hole.getsockname())
        except BlockingIOError:
            pass
        fillers.append(filler)
    print(server.server_address[1], hole.getsockname()[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
