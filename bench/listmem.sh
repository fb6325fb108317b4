#!/bin/bash
# The memory a list costs the helper, on the path people run: a release `scrolloff-dns start`, then
# `scrolloff lists add http://127.0.0.1:PORT/…` from a list server on loopback. For each case a
# fresh helper; its VmRSS before the add (the baseline), the peak of the add (VmHWM, reset just
# before it through /proc/PID/clear_refs) and its VmRSS once settled after it (steady), all from
# /proc/PID/status. The goal (issue "List memory"): the peak over the baseline at most twice the
# list's steady size over it plus a few MiB, and a list the download cap stops costs no more than
# the cap (64 MiB).
#
# Cases: 1,000,000 distinct names (bench/dns.sh style, ~40 bytes a line); 5,000,000 short distinct
# names (`n123.com`, so the file stays under the 64 MiB cap); ~60 MiB of one repeated name served
# gzip-compressed (under the cap: a list of 3.5 million copies of one rule); a gzip bomb that
# inflates to 1 GiB and a 2 GiB plain stream (both stopped at the cap, the add fails).
#
# Usage: bench/listmem.sh [case…]       cases: 1m 5m gz60 bomb stream (default: all)
# Needs root (clear_refs of a process of its own is enough, but the helper's state folder checks
# want a folder only its user writes) and python3. Loopback only; every process it starts is
# stopped and its folder removed on exit. Each add is bounded by ADD_TIMEOUT seconds (default 600).
set -eu
cd "$(dirname "$0")/.."
swift build -c release >&2
BIN_DIR=$(swift build -c release --show-bin-path)
DNS="$BIN_DIR/scrolloff-dns"
CLI="$BIN_DIR/scrolloff"
export SCROLLOFF_CATALOG=${SCROLLOFF_CATALOG:-"$PWD/blocklists"}
ADD_TIMEOUT=${ADD_TIMEOUT:-600}
CASES=${*:-"1m 5m gz60 bomb stream"}

. bench/lib.sh listmem
status_kib() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }

# The inputs, made once.
/usr/bin/python3 - "$WORK" "$CASES" <<'PY'
import gzip, random, sys, zlib
work, cases = sys.argv[1], sys.argv[2].split()
if "1m" in cases:
    rng = random.Random(42)
    words = ["feed", "reel", "clip", "snap", "tok", "gram", "vid", "scroll", "story", "live"]
    with open(f"{work}/1m.txt", "w") as f:
        for i in range(1_000_000):
            f.write(f"{rng.choice(words)}{i}.s{i % 9973}.{rng.choice(words)}-bench.com\n")
if "5m" in cases:
    with open(f"{work}/5m.txt", "w") as f:
        for start in range(0, 5_000_000, 100_000):
            f.write("".join(f"n{i}.com\n" for i in range(start, start + 100_000)))
if "gz60" in cases:
    line = b"bomb.listmem.example\n"
    block = line * (1 << 16)
    with open(f"{work}/gz60.txt.gz", "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as f:
            for _ in range((60 << 20) // len(block)):
                f.write(block)
PY

# The list server: static files, `.gz` ones with `Content-Encoding: gzip`; /bomb inflates to 1 GiB
# (one block compressed once after a full flush, so its bytes repeat); /stream sends 2 GiB of lines.
cat >"$WORK/server.py" <<'PY'
import http.server, os, sys, zlib
work, port = sys.argv[1], int(sys.argv[2])
LINE = b"bomb.listmem.example\n"
BLOCK = LINE * (1 << 16)
class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args): pass
    def do_GET(self):
        try:
            if self.path == "/bomb":
                self.send_response(200); self.send_header("Content-Encoding", "gzip"); self.end_headers()
                c = zlib.compressobj(9, zlib.DEFLATED, 31)
                # The first piece carries the gzip header; after a full flush (which resets the
                # window) the same block compresses to the same bytes, so that piece repeats.
                self.wfile.write(c.compress(BLOCK) + c.flush(zlib.Z_FULL_FLUSH))
                piece = c.compress(BLOCK) + c.flush(zlib.Z_FULL_FLUSH)
                for _ in range((1 << 30) // len(BLOCK)): self.wfile.write(piece)
            elif self.path == "/stream":
                self.send_response(200); self.end_headers()
                for _ in range((2 << 30) // len(BLOCK)): self.wfile.write(BLOCK)
            else:
                name = os.path.basename(self.path)
                if not os.path.isfile(os.path.join(work, name)):
                    self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers(); return
                with open(os.path.join(work, name), "rb") as f: body = f.read()
                self.send_response(200)
                if name.endswith(".gz"): self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Length", str(len(body))); self.end_headers()
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
PY
HTTP_PORT=$(free_port)
/usr/bin/python3 "$WORK/server.py" "$WORK" "$HTTP_PORT" &
PIDS+=($!)
for _ in $(seq 1 500); do curl -s -o /dev/null "http://127.0.0.1:$HTTP_PORT/none" && break; sleep 0.01; done

url_of() {
    case "$1" in
    1m) echo "http://127.0.0.1:$HTTP_PORT/1m.txt" ;;
    5m) echo "http://127.0.0.1:$HTTP_PORT/5m.txt" ;;
    gz60) echo "http://127.0.0.1:$HTTP_PORT/gz60.txt.gz" ;;
    bomb) echo "http://127.0.0.1:$HTTP_PORT/bomb" ;;
    stream) echo "http://127.0.0.1:$HTTP_PORT/stream" ;;
    esac
}

# VmRSS once it has stopped moving (the releaser thread and the trim after a publish give memory
# back for a moment after the add returns): two readings 1 s apart within 1%, at most 15 s.
settled_rss() {
    local pid=$1 last now
    last=$(status_kib "$pid" VmRSS)
    for _ in $(seq 1 15); do
        sleep 1
        now=$(status_kib "$pid" VmRSS)
        if [ $(( (now > last ? now - last : last - now) * 100 )) -le "$last" ]; then break; fi
        last=$now
    done
    echo "$now"
}

printf '%-7s %-8s %9s %9s %9s %7s %9s %9s %8s %s\n' case outcome "base MiB" "steady" "peak" "p/s" "list" "add peak" "ratio" "goal"
for case in $CASES; do
    state="$WORK/state-$case"
    sock="$state.sock"
    port=$(free_port)
    "$DNS" start --listen "127.0.0.1:$port" --upstream 127.0.0.1:9 --web-listen off \
        --state-dir "$state" --control-socket "$sock" >/dev/null 2>"$WORK/helper-$case.err" &
    pid=$!
    PIDS+=("$pid")
    for _ in $(seq 1 1000); do "$CLI" status --socket "$sock" >/dev/null 2>&1 && break; sleep 0.02; done
    base=$(settled_rss "$pid")
    echo 5 >"/proc/$pid/clear_refs"
    if timeout "$ADD_TIMEOUT" "$CLI" lists add "$(url_of "$case")" --name bench --socket "$sock" >"$WORK/add-$case.out" 2>&1; then
        outcome=added
    else
        outcome=refused
    fi
    steady=$(settled_rss "$pid")
    peak=$(status_kib "$pid" VmHWM)
    kill "$pid"; wait "$pid" 2>/dev/null || true
    # The list's own size and the add's peak, both over the baseline; the goal: add peak <=
    # 2 x list + 8 MiB, and for a list the cap stops (or one name) no more than the cap (64 MiB).
    awk -v c="$case" -v o="$outcome" -v b="$base" -v s="$steady" -v p="$peak" 'BEGIN {
        list = s - b; if (list < 0) list = 0; add = p - b
        bound = (c == "bomb" || c == "stream" || c == "gz60") ? 64 * 1024 : 2 * list + 8 * 1024
        printf "%-7s %-8s %9.1f %9.1f %9.1f %7.2f %9.1f %9.1f %8s %s\n", c, o, b / 1024, s / 1024, p / 1024, p / s,
            list / 1024, add / 1024, (list > 1024 ? sprintf("%.2f", add / list) : "-"),
            (add <= bound ? "met" : sprintf("missed (bound %.0f MiB)", bound / 1024))
    }'
    if [ "$outcome" = refused ] && [ "$case" != bomb ] && [ "$case" != stream ]; then
        echo "  the add failed: $(tail -2 "$WORK/add-$case.out")" >&2
    fi
done
