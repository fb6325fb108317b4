#!/usr/bin/env bash
# Side-by-side benchmark of scrolloff-dns and dnsmasq as blocking resolvers (issue 3, SPEC §9).
#
# Both servers load the same synthetic blocklist (200,000 and 1,000,000 names by default) and forward
# everything else to one local upstream (a third dnsmasq). scrolloff-dns blocks it the way a person
# does, through the engine's one decision path: `scrolloff lists add file://…` then `scrolloff block`
# (load time runs from start until the first blocked name answers 0.0.0.0). The query mix is ~90% blocked names and
# ~10% names answered from the server's cache. The server under test is pinned to one core and
# dnsperf to the other, runs of the two servers are interleaved, and the script prints for each:
# load time, RSS (and bytes per blocked name over an empty-list baseline), maximum QPS, latency at a
# fixed 20,000 QPS (mean, p50, p99 from dnsperf -v), lost queries, and the scrolloff/dnsmasq ratios.
#
# Usage: bench/dns.sh [SIZES] [ROUNDS]     e.g. bench/dns.sh "200000 1000000" 2
# Needs: dnsmasq, dnsperf, taskset, a release build (built here if missing). Not part of `make test`.
set -euo pipefail

SIZES=${1:-"200000 1000000"}
ROUNDS=${2:-2}
QPS_SECONDS=${QPS_SECONDS:-8}
LATENCY_SECONDS=${LATENCY_SECONDS:-5}
FIXED_QPS=${FIXED_QPS:-20000}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}

cd "$(dirname "$0")/.."
for tool in dnsmasq dnsperf taskset; do
    command -v "$tool" >/dev/null || { echo "bench/dns.sh: $tool is missing; install it (Debian: apt-get install $tool)" >&2; exit 1; }
done
# The flags of `make release` (static Swift runtime), so the two never rebuild each other.
swift build -c release --static-swift-stdlib --product scrolloff-dns >/dev/null
swift build -c release --static-swift-stdlib --product scrolloff >/dev/null
BIN="$(swift build -c release --show-bin-path)/scrolloff-dns"
CLI="$(swift build -c release --show-bin-path)/scrolloff"
WORK=$(mktemp -d /tmp/scrolloff-bench.XXXXXX)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now_ms() { date +%s%3N; }
rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
wait_answering() { # port name expected
    for _ in $(seq 1 3000); do
        if dig @127.0.0.1 -p "$1" +time=1 +tries=1 +short "$2" A 2>/dev/null | grep -q "$3"; then return 0; fi
        sleep 0.01
    done
    echo "server on port $1 never answered" >&2; return 1
}

# The upstream both servers forward to: answers every name under cache.bench.
UP_PORT=$(free_port)
dnsmasq --no-daemon --conf-file=/dev/null --port="$UP_PORT" --listen-address=127.0.0.1 --bind-interfaces \
    --no-resolv --no-hosts --local-ttl=3600 --address=/cache.bench/10.0.0.1 --pid-file= 2>/dev/null &
PIDS+=($!)
wait_answering "$UP_PORT" x.cache.bench 10.0.0.1

# Synthetic lists and the query file, once per size.
make_inputs() { # size
    local n=$1 dir="$WORK/$1"
    mkdir -p "$dir"
    /usr/bin/python3 - "$n" "$dir" <<'PY'
import random, sys
n, d = int(sys.argv[1]), sys.argv[2]
rng = random.Random(42)
words = ["feed", "reel", "clip", "snap", "tok", "gram", "vid", "scroll", "story", "live"]
names = [f"{rng.choice(words)}{i}.s{i % 9973}.{rng.choice(words)}-bench.com" for i in range(n)]
with open(f"{d}/blocklist.txt", "w") as f:
    f.write("\n".join(names) + "\n")
with open(f"{d}/dnsmasq.conf", "w") as f:
    for name in names:
        f.write(f"address=/{name}/0.0.0.0\n")
cached = [f"c{i}.cache.bench" for i in range(100)]
with open(f"{d}/queries.txt", "w") as f:
    for i in range(200_000):
        if i % 10 == 0:
            f.write(f"{rng.choice(cached)} A\n")
        else:
            # Half exact names, half subdomains: both are blocked (a name and its subdomains).
            name = rng.choice(names)
            f.write(f"{'www.' if i % 2 else ''}{name} A\n")
PY
    : > "$dir/empty.conf"
}

# Starts one server; sets SERVER_PID, SERVER_PORT, LOAD_MS.
start_server() { # kind list-size(or "empty") dir
    local kind=$1 which=$2 dir=$3 port start
    port=$(free_port)
    start=$(now_ms)
    if [ "$kind" = scrolloff ]; then
        # A fresh state folder per run: the block (and its cooldown) lives in the database.
        local state="$WORK/state-$port"
        taskset -c "$SERVER_CPU" "$BIN" start --listen "127.0.0.1:$port" --upstream "127.0.0.1:$UP_PORT" \
            --state-dir "$state" --control-socket "$state.sock" --threads 1 --log-level warning >/dev/null 2>"$WORK/scrolloff.err" &
    else
        local conf="$dir/dnsmasq.conf"; [ "$which" = empty ] && conf="$dir/empty.conf"
        taskset -c "$SERVER_CPU" dnsmasq --no-daemon --conf-file="$conf" --port="$port" --listen-address=127.0.0.1 \
            --bind-interfaces --no-resolv --no-hosts --server="127.0.0.1#$UP_PORT" --cache-size=10000 --pid-file= \
            2>/dev/null &
    fi
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
    SERVER_PORT=$port
    wait_answering "$port" x.cache.bench 10.0.0.1
    if [ "$kind" = scrolloff ] && [ "$which" != empty ]; then
        "$CLI" lists add "file://$dir/blocklist.txt" --name bench --socket "$WORK/state-$port.sock" >/dev/null
        "$CLI" block bench --socket "$WORK/state-$port.sock" >/dev/null
        wait_answering "$port" "$(head -1 "$dir/blocklist.txt")" 0.0.0.0
    fi
    LOAD_MS=$(( $(now_ms) - start ))
}

stop_server() { kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; }

perf() { taskset -c "$CLIENT_CPU" dnsperf -s 127.0.0.1 -p "$SERVER_PORT" -d "$1" "${@:2}" 2>&1; }

# One measurement; prints a row and appends "kind size load rss qps mean p50 p99 lost" to $WORK/rows.
measure() { # kind size
    local kind=$1 n=$2 dir="$WORK/$2" out qps lost rss lat
    start_server "$kind" full "$dir"
    rss=$(rss_kib "$SERVER_PID")
    perf "$dir/queries.txt" -l 2 -c 4 -q 200 >/dev/null               # warm the cache
    out=$(perf "$dir/queries.txt" -l "$QPS_SECONDS" -c 4 -q 500)
    qps=$(awk '/Queries per second/ {print $4}' <<<"$out")
    lost=$(awk '/Queries lost/ {print $3}' <<<"$out")
    # dnsperf -v prints one line per query ending with its latency in seconds.
    lat=$(perf "$dir/queries.txt" -l "$LATENCY_SECONDS" -c 4 -Q "$FIXED_QPS" -v \
        | awk '$1 == ">" {print $NF * 1000000}' | sort -n \
        | awk '{a[NR]=$1; s+=$1} END {if (NR==0) {print "nan nan nan 0"; exit} printf "%.0f %.0f %.0f %d\n", s/NR, a[int(NR*0.5)+1], a[int(NR*0.99)], NR}')
    read -r mean p50 p99 answered <<<"$lat"
    local expected=$(( FIXED_QPS * LATENCY_SECONDS ))
    rss=$(( $(rss_kib "$SERVER_PID") > rss ? $(rss_kib "$SERVER_PID") : rss ))
    stop_server
    printf "%-9s %9s %8s ms %9s KiB %10s qps   @%dk: mean %5s µs p50 %5s µs p99 %6s µs answered %s/%s   lost %s\n" \
        "$kind" "$n" "$LOAD_MS" "$rss" "$qps" $((FIXED_QPS / 1000)) "$mean" "$p50" "$p99" "$answered" "$expected" "$lost"
    echo "$kind $n $LOAD_MS $rss $qps $mean $p50 $p99 $lost" >>"$WORK/rows"
}

baseline_rss() { # kind
    start_server "$1" empty "$WORK/$(echo "$SIZES" | awk '{print $1}')"
    rss_kib "$SERVER_PID"
    stop_server
}

echo "scrolloff-dns vs dnsmasq $(dnsmasq --version | head -1 | awk '{print $3}'), $(nproc) cores; server on CPU $SERVER_CPU, dnsperf on CPU $CLIENT_CPU"
echo "mix: ~90% blocked (names and subdomains), ~10% cached; QPS: dnsperf -c 4 -q 500 for ${QPS_SECONDS}s; latency: -Q $FIXED_QPS for ${LATENCY_SECONDS}s"
for n in $SIZES; do make_inputs "$n"; done
BASE_SCROLLOFF=$(baseline_rss scrolloff)
BASE_DNSMASQ=$(baseline_rss dnsmasq)
echo "baseline RSS with an empty list: scrolloff $BASE_SCROLLOFF KiB, dnsmasq $BASE_DNSMASQ KiB"
for n in $SIZES; do
    for round in $(seq 1 "$ROUNDS"); do
        measure scrolloff "$n"
        measure dnsmasq "$n"
    done
done

echo
echo "medians over $ROUNDS rounds, and scrolloff/dnsmasq ratios:"
/usr/bin/python3 - "$WORK/rows" "$BASE_SCROLLOFF" "$BASE_DNSMASQ" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
base = {"scrolloff": int(sys.argv[2]), "dnsmasq": int(sys.argv[3])}
def med(kind, n, col):
    values = [float(r[col]) for r in rows if r[0] == kind and r[1] == n and r[col] not in ("nan", "")]
    return statistics.median(values) if values else float("nan")
for n in sorted({r[1] for r in rows}, key=int):
    size = int(n)
    s = {c: med("scrolloff", n, i) for i, c in enumerate(["kind", "n", "load", "rss", "qps", "mean", "p50", "p99", "lost"]) if i >= 2}
    d = {c: med("dnsmasq", n, i) for i, c in enumerate(["kind", "n", "load", "rss", "qps", "mean", "p50", "p99", "lost"]) if i >= 2}
    per = lambda kind, m: (m["rss"] - base[kind]) * 1024 / size
    print(f"{size:>9} names  load {s['load']:.0f}/{d['load']:.0f} ms ({s['load']/d['load']:.2f}x)"
          f"  RSS {s['rss']/1024:.1f}/{d['rss']/1024:.1f} MiB, per name {per('scrolloff', s):.0f}/{per('dnsmasq', d):.0f} B ({per('scrolloff', s)/per('dnsmasq', d):.2f}x)"
          f"  QPS {s['qps']:.0f}/{d['qps']:.0f} ({s['qps']/d['qps']:.2f}x)"
          f"  p99@20k {s['p99']:.0f}/{d['p99']:.0f} µs ({s['p99']/d['p99']:.2f}x)  lost {s['lost']:.0f}/{d['lost']:.0f}")
PY
