"""How long an urge takes from the blocked query to a live reader of the event stream (SPEC §12),
and how many writes a burst of urges takes.

Run by EventStreamEndToEndTests with /usr/bin/python3 (python3-dnspython). Arguments: the helper's
DNS port, its control socket, its metrics port. A reader that keeps up and one that never reads
follow the stream. First, blocked queries for instagram.com one at a time from addresses of their
own (a new urge episode each): the seconds from each query's answer to its urge on the reader.
Then a second of a flood: 40 such queries 25 ms apart, and how many chunks of the stream (the
helper writes one per commit) carried them. A scrape of the metrics is taken while both readers
are still connected. Prints one JSON object; every socket it opens is closed before it exits.
"""
import json
import socket
import sys
import threading
import time
import urllib.request

import dns.message
import dns.query

PORT = int(sys.argv[1])
SOCKET = sys.argv[2]
METRICS = int(sys.argv[3])
SPACED = 6
BURST = 40
REQUEST = b"GET /v1/events/stream HTTP/1.1\r\nHost: scrolloff\r\nAccept: text/event-stream\r\n\r\n"

lock = threading.Lock()
arrivals = {}  # client address -> arrival time
chunks = []  # per chunk of the body: the client addresses of the urges it carried
live = threading.Event()


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(SOCKET)
    s.sendall(REQUEST)
    return s


def read(s):
    """Reads the chunked body one chunk at a time, each chunk's SSE messages together."""
    f = s.makefile("rb")
    try:
        while f.readline() not in (b"\r\n", b""):  # the head
            pass
        while True:
            size = f.readline()
            if not size:
                return
            length = int(size.split(b";")[0], 16)
            if length == 0:
                return
            data = f.read(length).decode(errors="replace")
            f.readline()
            now = time.monotonic()
            urges = []
            for line in data.split("\n"):
                if line == ": live":
                    live.set()
                elif line.startswith("data: "):
                    try:
                        event = json.loads(line[6:])
                    except ValueError:
                        continue
                    if event.get("kind") == "urge":
                        urges.append(event.get("client_ip"))
            with lock:
                for client in urges:
                    arrivals.setdefault(client, now)
                if urges:
                    chunks.append(urges)
    except (OSError, ValueError):
        pass


def ask(source):
    dns.query.udp(dns.message.make_query("instagram.com", "A"), "127.0.0.1", port=PORT, timeout=3, source=source)
    return time.monotonic()


def wait_for(sources, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with lock:
            if all(s in arrivals for s in sources):
                return
        time.sleep(0.01)


keeping = connect()
hanging = connect()
try:
    threading.Thread(target=read, args=(keeping,), daemon=True).start()
    assert live.wait(10), "the stream was not live within 10 s"
    answered = {}
    for i in range(SPACED):
        source = f"127.0.77.{i + 2}"
        answered[source] = ask(source)
        time.sleep(0.3)
    wait_for(answered, 5)
    with lock:
        delays = [round(arrivals[s] - answered[s], 3) if s in arrivals else None for s in answered]
        before = len(chunks)

    burst = [f"127.0.78.{i + 2}" for i in range(BURST)]
    started = time.monotonic()
    for source in burst:
        ask(source)
        time.sleep(0.025)
    burst_seconds = time.monotonic() - started
    wait_for(burst, 5)
    with lock:
        burst_chunks = sum(1 for c in chunks[before:] if any(client in burst for client in c))
        burst_seen = sum(1 for s in burst if s in arrivals)
    metrics = urllib.request.urlopen(f"http://127.0.0.1:{METRICS}/metrics", timeout=5).read().decode()
finally:
    keeping.close()
    hanging.close()
print(json.dumps({"delays": delays, "burst": BURST, "burst_seen": burst_seen, "burst_chunks": burst_chunks,
                  "burst_seconds": round(burst_seconds, 3), "metrics": metrics}))
