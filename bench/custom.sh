#!/usr/bin/env bash
# How long a person waits for `scrolloff block new.example` with a large list in force, on one
# helper on SQLite: the CLI's time to return, and the time from its start until the helper's DNS
# answers the new domain blocked (a poller asks every 2 ms).
#
# One release helper (`scrolloff-dns start --config`, its own state folder, control socket and DNS
# port); a synthetic list of NAMES names served by URL, named in its file (`[[lists.source]]`) and
# blocked in the default profile. Then CHANGES blocks of a new custom domain each (`bench-N.example`):
# each changes the entries, so the matcher is built again; with the custom part built on its own
# (`LayeredMatcher`) only the custom domains are, without it the list's NAMES names too.
#
# Usage: bench/custom.sh [CHANGES]    NAMES=1000000
#   SCROLLOFF_BIN=… SCROLLOFF_CLI=… measure other binaries (no build).
#   PERF=FILE records the helper with `perf record -g` during one more block, into FILE.
# Needs: root, dnsmasq, python3-dnspython, a release build.
set -euo pipefail

CHANGES=${1:-15}
NAMES=${NAMES:-1000000}

cd "$(dirname "$0")/.."
for tool in dnsmasq dig; do
    command -v "$tool" >/dev/null || { echo "bench/custom.sh: $tool is missing; run scripts/install-deps.sh" >&2; exit 1; }
done
if [ -z "${SCROLLOFF_BIN:-}" ]; then make --no-print-directory release >/dev/null; fi
BIN=${SCROLLOFF_BIN:-"$(swift build -c release --show-bin-path)/scrolloff-dns"}
CLI=${SCROLLOFF_CLI:-"$(swift build -c release --show-bin-path)/scrolloff"}
export SCROLLOFF_CATALOG=${SCROLLOFF_CATALOG:-"$PWD/blocklists"}
. bench/lib.sh custom

start_cache_upstream
serve_bench_list "$NAMES"

PORT=$(free_port)
SOCK="$WORK/helper.sock"
printf '[[lists.source]]\nname = "bench"\nurl = "http://127.0.0.1:%s/blocklist.txt"\n' "$HTTP_PORT" >"$WORK/helper.toml"
"$BIN" start --config "$WORK/helper.toml" --listen "127.0.0.1:$PORT" --upstream "127.0.0.1:$UP_PORT" \
    --state-dir "$WORK/state" --control-socket "$SOCK" >/dev/null 2>"$WORK/helper.err" &
HELPER=$!
PIDS+=($HELPER)
wait_answering "$PORT" x.cache.bench 10.0.0.1
started=$(date +%s%3N)
"$CLI" block bench --socket "$SOCK" >/dev/null
wait_answering "$PORT" "$FIRST" 0.0.0.0 120
echo "one helper on SQLite, $NAMES names blocked; the list in force $(( $(date +%s%3N) - started )) ms after \`block bench\`;" \
     "$(nproc --all) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

if [ -n "${PERF:-}" ]; then
    perf record -g -o "$PERF" -p "$HELPER" -- sleep 20 >/dev/null 2>&1 &
    recorder=$!
    sleep 1
    time "$CLI" block perf.example --socket "$SOCK" >/dev/null || true
    kill -INT "$recorder" 2>/dev/null || true
    wait "$recorder" || true
fi

/usr/bin/python3 - "$CLI" "$SOCK" "$PORT" "$CHANGES" <<'PY' || { tail -n 15 "$WORK"/helper.err >&2; exit 1; }
import statistics, subprocess, sys, time
import dns.message, dns.query
cli, sock, port, changes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

def answer(name):
    try:
        reply = dns.query.udp(dns.message.make_query(name, "A"), "127.0.0.1", port=port, timeout=1)
        return " ".join(rr.to_text() for rrset in reply.answer for rr in rrset)
    except Exception:
        return ""

cli_times, answer_times = [], []
for i in range(changes):
    name = f"bench-{i}.example"
    t0 = time.monotonic()
    subprocess.run([cli, "block", name, "--socket", sock], check=True, stdout=subprocess.DEVNULL)
    t1 = time.monotonic()
    deadline = t1 + 30
    while "0.0.0.0" not in answer(name):
        if time.monotonic() > deadline:
            sys.exit(f"the helper never answered {name} blocked")
        time.sleep(0.002)
    cli_times.append((t1 - t0) * 1000)
    answer_times.append((time.monotonic() - t0) * 1000)

for label, v in (("the CLI's time", cli_times), ("until DNS answers blocked", answer_times)):
    v = sorted(v)
    print(f"block of a new domain, {len(v)} changes, {label:26}: median {statistics.median(v):6.0f} ms"
          f"  min {v[0]:6.0f} ms  max {v[-1]:6.0f} ms")
with open("/proc/loadavg") as f:
    print("load", " ".join(f.read().split()[:3]))
PY
