"""Slow DNS-over-TCP readers and an ordinary client, for bench/tcpslow.sh.

flood PORT SECONDS SOURCES...  every source opens PER_SOURCE connections (default 32) to the
    server (127.0.0.1 for IPv4 sources, ::1 for IPv6 ones), pipelines 2,000 queries whenever its
    socket takes them and never reads a reply; a connection the server closes is opened again from
    the same source, as an attacker would. Prints FLOODING once connected, then a summary.
time PORT COUNT SOURCE  one ordinary client: COUNT queries one after another on one connection,
    each given DEADLINE seconds (default 2) from send to answer; a connection that fails is
    replaced. Prints the answered count, each kind of failure, p50/p99/max in ms.
"""
import os, select, socket, struct, sys, time

import dns.message


def server_for(source):
    return "::1" if ":" in source else "127.0.0.1"


def family(source):
    return socket.AF_INET6 if ":" in source else socket.AF_INET


def flood(port, seconds, sources):
    per_source = int(os.environ.get("PER_SOURCE", "32"))
    frames = b""
    for i in range(2000):
        w = dns.message.make_query("blocked.test" if i % 2 else "host.test", "A", id=i).to_wire()
        frames += struct.pack(">H", len(w)) + w

    def connect(source):
        s = socket.socket(family(source), socket.SOCK_STREAM)
        s.setblocking(False)
        s.bind((source, 0))
        try:
            s.connect((server_for(source), port))
        except (BlockingIOError, InterruptedError):
            pass
        return s

    conns = {}
    for source in sources:
        for _ in range(per_source):
            conns[connect(source)] = (source, 0)
    print("FLOODING", len(conns), flush=True)
    sent = cut = 0
    end = time.time() + seconds
    while time.time() < end:
        _, writable, broken = select.select([], list(conns), list(conns), 0.05)
        for s in set(writable) | set(broken):
            source, offset = conns[s]
            try:
                n = s.send(frames[offset:])
                sent += n
                conns[s] = (source, (offset + n) % len(frames))
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                cut += 1
                del conns[s]
                s.close()
                conns[connect(source)] = (source, 0)
    for s in conns:
        s.close()
    print("FLOOD sent %d queries, %d connections closed by the server and opened again" % (sent // 32, cut), flush=True)


def timer(port, count, source):
    deadline = float(os.environ.get("DEADLINE", "2"))
    kinds = {}
    times = []
    by_name = {}  # DETAIL: latencies of each name apart (one is answered locally, one forwarded)
    s = None
    fresh = True  # no reply yet on this connection: a failure then is "-new", else "-old"

    def fail(kind):
        if os.environ.get("DETAIL"):
            kind += "-new" if fresh else "-old"
        kinds[kind] = kinds.get(kind, 0) + 1

    def read(s, n, until):
        data = b""
        while len(data) < n:
            left = until - time.perf_counter()
            if left <= 0:
                raise TimeoutError("reply")
            s.settimeout(left)
            chunk = s.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    # TRACE=FILE: one line per answered query (seconds since the first, milliseconds taken, whether
    # its connection was new), to see when the slow ones happen.
    trace = open(os.environ["TRACE"], "w") if os.environ.get("TRACE") else None
    began = time.perf_counter()
    for i in range(count):
        start = time.perf_counter()
        until = start + deadline
        try:
            if s is None:
                s = socket.socket(family(source), socket.SOCK_STREAM)
                s.bind((source, 0))
                s.settimeout(deadline)
                fresh = True
                try:
                    s.connect((server_for(source), port))
                except socket.timeout:
                    raise TimeoutError("connect")
                except ConnectionRefusedError:
                    raise ConnectionError("connect refused")
            q = dns.message.make_query(("host.test", "blocked.test")[i % 2], "A", id=i)
            w = q.to_wire()
            s.sendall(struct.pack(">H", len(w)) + w)
            r = dns.message.from_wire(read(s, struct.unpack(">H", read(s, 2, until))[0], until))
            if r.id != i or not r.answer:
                fail("wrong-answer")
            else:
                times.append(time.perf_counter() - start)
                if trace:
                    trace.write("%.3f %.1f %s\n" % (start - began, times[-1] * 1000, "new" if fresh else "old"))
                by_name.setdefault(q.question[0].name.to_text(), []).append(times[-1])
            fresh = False
        except TimeoutError as e:
            fail("timeout-connect" if e.args == ("connect",) else "timeout-reply")
            s.close(); s = None
        except socket.timeout:
            fail("timeout-reply")
            s.close(); s = None
        except EOFError:
            fail("closed-by-server")
            s.close(); s = None
        except ConnectionResetError:
            fail("reset")
            s.close(); s = None
        except OSError as e:
            fail("error-%s" % (e.errno or e))
            if s: s.close()
            s = None
        time.sleep(0.01)
    times.sort()
    pick = lambda p: times[min(len(times) - 1, int(len(times) * p))] * 1000 if times else -1
    failures = " ".join("%s=%d" % kv for kv in sorted(kinds.items())) or "none"
    detail = ""
    if os.environ.get("DETAIL"):
        for name, values in sorted(by_name.items()):
            values.sort()
            detail += " %s p99 %.1f" % (name, values[min(len(values) - 1, int(len(values) * 0.99))] * 1000)
    print("ANSWERED %d FAILED %d P50 %.1f P99 %.1f MAX %.1f failures: %s%s" % (
        len(times), sum(kinds.values()), pick(0.5), pick(0.99), times[-1] * 1000 if times else -1, failures, detail), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "flood":
        flood(int(sys.argv[2]), float(sys.argv[3]), sys.argv[4:])
    else:
        timer(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
