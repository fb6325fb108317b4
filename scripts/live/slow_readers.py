"""100 readers of the event stream that never read, while urges flood the event log (SPEC §12).

Run by EventStreamEndToEndTests with /usr/bin/python3 (python3-dnspython). Arguments: the helper's
DNS port, its control socket, the scrolloff CLI. Prints one JSON object with what it measured:
DNS answer times before and while the readers hang, the events a reader that keeps up got (ids
and arrival delays of `adjust` events), and what a reader that fell behind got before and after
it resumed. Every socket it opens is closed before it exits.
"""
import http.client
import json
import socket
import statistics
import subprocess
import sys
import threading
import time

import dns.message
import dns.query

PORT = int(sys.argv[1])
SOCKET = sys.argv[2]
CLI = sys.argv[3]
NAMES = ["instagram.com", "reddit.com", "9gag.com", "www.facebook.com", "imgur.com", "linkedin.com", "discord.com",
         "tiktok.com", "pinterest.com"]
SOURCES = [f"127.0.0.{i}" for i in range(2, 252)]
REQUEST = "GET /v1/events/stream{query} HTTP/1.1\r\nHost: scrolloff\r\nAccept: text/event-stream\r\n\r\n"


class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("scrolloff", timeout=timeout)
        self.path = path

    def connect(self):
        self.sock = unix_connect()
        self.sock.settimeout(self.timeout)


def unix_connect():
    """A blocking connect: the helper accepts within moments, but 100 connections at once may
    fill the listen backlog for a while (EAGAIN on a Unix socket), so wait and try again."""
    deadline = time.monotonic() + 10
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(SOCKET)
            return s
        except BlockingIOError:
            s.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


class Reader:
    """Reads the stream (chunked HTTP, decoded by http.client), records each message."""

    def __init__(self, after=None, start_reading=True):
        self.connection = UnixHTTP(SOCKET, timeout=60)
        query = "" if after is None else f"?after={after}"
        self.connection.request("GET", "/v1/events/stream" + query, headers={"Accept": "text/event-stream"})
        self.response = self.connection.getresponse()
        assert self.response.status == 200, self.response.status
        self.events = []  # (id, kind, data, arrival)
        self.dropped = None
        self.cursor = None  # the stream's last id, an event's or the starting point's
        self.live = threading.Event()
        self.ended = threading.Event()
        self.go = threading.Event()
        if start_reading:
            self.go.set()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        self.go.wait()
        fields = {}
        try:
            while True:
                line = self.response.readline()
                if not line:
                    break
                line = line.decode().rstrip("\r\n")
                if line == "":
                    if "id" in fields:
                        self.cursor = int(fields["id"])
                    if "data" in fields:
                        if fields.get("event") == "dropped":
                            self.dropped = json.loads(fields["data"])
                        else:
                            self.events.append((int(fields["id"]), json.loads(fields["data"]), time.monotonic()))
                    fields = {}
                elif line.startswith(":"):
                    if line == ": live":
                        self.live.set()
                else:
                    name, _, value = line.partition(":")
                    fields[name] = value[1:] if value.startswith(" ") else value
        except (OSError, http.client.HTTPException):
            pass
        self.ended.set()

    def close(self):
        self.connection.close()


def dns_time(name="www.example.com", source="127.0.0.1"):
    query = dns.message.make_query(name, "A")
    started = time.monotonic()
    dns.query.udp(query, "127.0.0.1", port=PORT, timeout=3, source=source)
    return time.monotonic() - started


def cli(*arguments):
    subprocess.run([CLI, *arguments, "--socket", SOCKET], check=True, stdout=subprocess.DEVNULL)


result = {}
slow = []
try:
    baseline = [dns_time() for _ in range(40)]

    # 100 readers that send their request and never read a byte of the answer.
    for _ in range(100):
        s = unix_connect()
        s.sendall(REQUEST.format(query="").encode())
        slow.append(s)
    fast = Reader()
    lagging = Reader(start_reading=False)
    assert fast.live.wait(10), "the reader that keeps up was not live within 10 s"
    time.sleep(0.5)  # the hanging readers' requests are in

    # The flood: each (entry, client) is an urge episode, so one event each; a DNS probe every 25.
    loaded = []
    count = 0
    flood_start = time.monotonic()
    for source in SOURCES:
        for name in NAMES:
            dns.query.udp(dns.message.make_query(name, "A"), "127.0.0.1", port=PORT, timeout=3, source=source)
            count += 1
            if count % 25 == 0:
                loaded.append(dns_time())
    flood_end = time.monotonic()
    time.sleep(1)
    lagging.go.set()  # it starts reading now, far behind

    # Events one at a time while the hanging readers still hang: each must reach the reader that
    # keeps up within a second of the command's answer.
    delays = []
    for i in range(5):
        cli("adjust", "+1m", "--note", f"live {i}")
        answered = time.monotonic()
        deadline = answered + 5
        while time.monotonic() < deadline:
            hit = [e for e in fast.events if e[1].get("kind") == "adjusted" and f"live {i}" in (e[1].get("message") or "")]
            if hit:
                delays.append(max(0.0, hit[0][2] - answered))
                break
            time.sleep(0.01)
        else:
            delays.append(None)
        loaded.append(dns_time())

    # The lagging reader: what it got (all of it, or up to a `dropped` notice, or up to where the
    # helper closed it for taking nothing for 5 s), then the rest from its last id.
    last = fast.events[-1][0] if fast.events else 0
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not lagging.ended.is_set():
        if lagging.events and lagging.events[-1][0] >= last:
            break
        time.sleep(0.05)
    lag_ids = [e[0] for e in lagging.events]
    resumed_ids = []
    if not lag_ids or lag_ids[-1] < last:
        after = lagging.dropped["last_id"] if lagging.dropped else lagging.cursor
        resumed = Reader(after=after)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not (resumed.events and resumed.events[-1][0] >= last):
            time.sleep(0.05)
        resumed_ids = [e[0] for e in resumed.events]
        resumed.close()

    result = {
        "baseline": baseline,
        "loaded": loaded,
        "flood_seconds": flood_end - flood_start,
        "fast_ids": [e[0] for e in fast.events],
        "fast_kinds": [e[1].get("kind") for e in fast.events],
        "delays": delays,
        "lagging_ids": lag_ids,
        "lagging_start": lagging.events[0][0] if lagging.events else None,
        "lagging_dropped": lagging.dropped,
        "lagging_ended": lagging.ended.is_set(),
        "resumed_ids": resumed_ids,
        "baseline_median": statistics.median(baseline),
        "loaded_median": statistics.median(loaded),
        "loaded_max": max(loaded),
    }
    fast.close()
    lagging.close()
finally:
    for s in slow:
        s.close()
print(json.dumps(result))
