#!/usr/bin/python3
"""Slow and idle clients against the household page, from many source addresses.

Used by HouseholdWebSlowClientEndToEndTests; also runnable by hand against a helper:

  slow_clients.py slow --host 127.0.0.1 --port 5381 --sources 127.0.0.10-29 --per-source 16 --seconds 12
  slow_clients.py idle --host 127.0.0.1 --port 5381 --sources 127.0.0.10-17 --per-source 32 --newcomer 127.0.0.2
  slow_clients.py hold --host ::1 --port 5381 --sources fd00:5ce:b::10-49 --per-source 1 --same fd00:5ce:b::99 --other fd00:5ce:c::1

Every mode is bounded in connections and in time, and prints one JSON object on its last line.
A source list is comma-separated; `A-B` counts the last number (decimal for IPv4, hex for IPv6).
"""
import argparse
import ipaddress
import json
import selectors
import socket
import sys
import time


def sources(text):
    out = []
    for part in text.split(","):
        if "-" in part:
            first, last = part.rsplit("-", 1)
            start = ipaddress.ip_address(first)
            radix, separator = (16, ":") if start.version == 6 else (10, ".")
            low = int(first.rsplit(separator, 1)[1] or "0", radix)
            out += [str(start + i) for i in range(int(last, radix) - low + 1)]
        else:
            out.append(part)
    return out


def connect(source, host, port, timeout=5.0):
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.bind((source, 0))
    s.connect((host, port))
    return s


def read_response(s, deadline):
    """Reads one HTTP/1.1 response with a Content-Length; returns (status, seconds) or (None, why)."""
    data = b""
    while b"\r\n\r\n" not in data:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = s.recv(65536)
        except OSError as error:
            return None, str(error)
        if not chunk:
            return None, "closed"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    while len(body) < length:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = s.recv(65536)
        if not chunk:
            return None, "closed mid-body"
        body += chunk
    return status, None


def request(s, path="/signin"):
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: household\r\n\r\n".encode())


def closed_now(s, wait):
    """Whether the server has closed `s` (EOF or reset) within `wait` seconds."""
    s.settimeout(wait)
    try:
        return s.recv(1) == b""
    except socket.timeout:
        return False
    except OSError:
        return True


def load_page(source, host, port, seconds=10.0):
    started = time.monotonic()
    try:
        s = connect(source, host, port, timeout=seconds)
        request(s, "/")
        status, why = read_response(s, started + seconds)
        s.close()
    except OSError as error:
        status, why = None, str(error)
    return {"status": status, "error": why, "seconds": round(time.monotonic() - started, 3)}


def slow(args):
    """Each slot sends a request head a byte a second and never finishes it; reconnects when cut."""
    addresses = sources(args.sources)
    selector = selectors.DefaultSelector()
    started = time.monotonic()
    lifetimes, opened, failed = [], 0, 0
    slots = []

    def open_slot(source):
        nonlocal opened, failed
        try:
            s = connect(source, args.host, args.port)
            s.sendall(b"GET / HTTP/1.1\r\nHost: household\r\n")
            s.setblocking(False)
        except OSError:
            failed += 1
            return None
        opened += 1
        slot = {"socket": s, "source": source, "opened": time.monotonic(), "sent": 0}
        selector.register(s, selectors.EVENT_READ, slot)
        return slot

    for source in addresses:
        for _ in range(args.per_source):
            slot = open_slot(source)
            if slot:
                slots.append(slot)
    print(f"READY {len(slots)}", flush=True)
    next_byte = time.monotonic() + 1
    pending = []  # (when, source): a cut slot comes back half a second later, as an attacker would
    while time.monotonic() - started < args.seconds:
        wake = min([next_byte, started + args.seconds] + [when for when, _ in pending[:1]])
        for key, _ in selector.select(timeout=max(0, wake - time.monotonic())):
            slot = key.data
            try:
                data = slot["socket"].recv(4096)
            except OSError:
                data = b""
            if data:
                continue  # an answer (such as 408) before the close
            selector.unregister(slot["socket"])
            slot["socket"].close()
            lifetimes.append(round(time.monotonic() - slot["opened"], 3))
            slots.remove(slot)
            if args.reconnect:
                pending.append((time.monotonic() + 0.5, slot["source"]))
        if opened >= args.max_connections:
            pending.clear()
        while pending and pending[0][0] <= time.monotonic():
            again = open_slot(pending.pop(0)[1])
            if again:
                slots.append(again)
        if time.monotonic() >= next_byte:
            next_byte += 1
            for slot in list(slots):
                try:
                    slot["socket"].send(b"X-Slow: a\r\n"[slot["sent"] % 11:][:1])
                    slot["sent"] += 1
                except OSError:
                    pass  # the read side sees the close
    still_open = [round(time.monotonic() - slot["opened"], 3) for slot in slots]
    for slot in slots:
        slot["socket"].close()
    print(json.dumps({"opened": opened, "failed": failed, "lifetimes": lifetimes, "still_open": still_open}))


def idle(args):
    """Fills the pool with kept-alive connections (the first one idle longest), then a newcomer."""
    addresses = sources(args.sources)
    deadline = time.monotonic() + 60
    first = connect(addresses[0], args.host, args.port)
    request(first)
    first_status, _ = read_response(first, deadline)
    time.sleep(0.3)
    fill_started = time.monotonic()
    others = []
    for index, source in enumerate(addresses):
        for n in range(args.per_source - (1 if index == 0 else 0)):
            s = connect(source, args.host, args.port)
            request(s)
            others.append(s)
    statuses = [read_response(s, deadline)[0] for s in others]
    fill_seconds = round(time.monotonic() - fill_started, 3)
    newcomer = load_page(args.newcomer, args.host, args.port)
    first_closed = closed_now(first, 1.0)
    others_closed = sum(1 for s in others if closed_now(s, 0.01))
    for s in [first] + others:
        s.close()
    print(json.dumps({
        "first_status": first_status, "filled": 1 + sum(1 for status in statuses if status == 200),
        "fill_seconds": fill_seconds, "newcomer": newcomer, "first_closed": first_closed, "others_closed": others_closed,
    }))


def hold(args):
    """Connections that send nothing from many addresses; which are closed at once; then a
    connection from `--same` (expected closed at once) and a page load from `--other`."""
    addresses = sources(args.sources)
    held = []
    for source in addresses:
        for _ in range(args.per_source):
            held.append(connect(source, args.host, args.port))
    time.sleep(0.5)
    closed = sum(1 for s in held if closed_now(s, 0.01))
    same = connect(args.same, args.host, args.port)
    same_closed = closed_now(same, 1.0)
    other = load_page(args.other, args.host, args.port)
    for s in held + [same]:
        s.close()
    print(json.dumps({"held": len(held), "closed": closed, "same_closed": same_closed, "other": other}))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    modes = parser.add_subparsers(dest="mode", required=True)
    for name in ("slow", "idle", "hold"):
        mode = modes.add_parser(name)
        mode.add_argument("--host", required=True)
        mode.add_argument("--port", type=int, required=True)
        mode.add_argument("--sources", required=True)
        mode.add_argument("--per-source", type=int, default=1)
        if name == "slow":
            mode.add_argument("--seconds", type=float, default=12)
            mode.add_argument("--reconnect", action="store_true")
            mode.add_argument("--max-connections", type=int, default=2000)
        if name == "idle":
            mode.add_argument("--newcomer", required=True)
        if name == "hold":
            mode.add_argument("--same", required=True)
            mode.add_argument("--other", required=True)
    args = parser.parse_args()
    {"slow": slow, "idle": idle, "hold": hold}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
