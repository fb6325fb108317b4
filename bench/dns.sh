#!/usr/bin/env bash
# Side-by-side benchmark of scrolloff-dns, dnsmasq and unbound as blocking resolvers (SPEC §9).
#
# The production path: scrolloff-dns is started as people start it (`scrolloff-dns start`, no
# diagnostic flags; pinned to one core, so it runs one event loop), blocks two catalog
# services (`scrolloff block instagram tiktok`), then a synthetic list is ADDED BY URL from a local
# HTTP server (`scrolloff lists add http://127.0.0.1:PORT/…`) and blocked (`scrolloff block bench`),
# all through the CLI and so through the one decision path users run. dnsmasq gets the same names
# as `address=/name/0.0.0.0` lines, unbound (one thread) as `local-zone: "name." always_null`.
# All three forward everything else to one local upstream (another dnsmasq).
#
# The query mix is ~90% blocked names (half the listed names, half a subdomain of one) and ~10%
# names answered from the server's cache. The server is pinned to SERVER_CPU and dnsperf to
# CLIENT_CPU; in each round every server is started, then they are measured by turns, REPS passes
# each (measure_round says why). For each it prints: the time until the
# list is in force (scrolloff: from `lists add` until a listed name answers 0.0.0.0, the CLI's
# start-up included; peers: from start until a listed name answers), RSS and bytes per name over
# the same server with an empty list (see start_server), maximum QPS, latency at a fixed 20,000 QPS (mean, p50, p99 from
# dnsperf -v), lost queries, and ratios against the better peer. For scrolloff at the largest size it
# then measures a refresh: the served list changes (1% of the names dropped, 1% new), `scrolloff
# lists update bench` runs while dnsperf sends 20,000 QPS, and the script prints the p99 during
# the refresh and how long until a new name answers blocked.
#
# Usage: bench/dns.sh [SIZES] [ROUNDS]     e.g. bench/dns.sh "200000 1000000" 3
#   SERVERS="scrolloff dnsmasq unbound"  QPS_SECONDS=8  LATENCY_SECONDS=5  FIXED_QPS=20000  REFRESH=1
#   SERVERS="scrolloff scrolloff-pg": scrolloff-pg is the same helper with its state on PostgreSQL
#     (`[store] backend = "postgresql"`, a server started in a temporary folder by bench/pg.sh, a
#     new database per start); the summary then compares it with scrolloff on SQLite (the goal:
#     QPS and latency equal). It is set up through the same CLI verbs.
#   REPS=3: passes per round, the servers measured by turns within each (see measure_round).
#   REFRESH_CLI=idle|normal: the scheduling class of the `lists update` that starts the refresh.
#   SCROLLOFF_BIN=… SCROLLOFF_CLI=… measure other binaries (no build).
#   QPS_SECONDS=2 LATENCY_SECONDS=1 bench/dns.sh 20000 1 is a quick check.
# Needs: dnsmasq, unbound, dnsperf, taskset, chrt, /usr/bin/python3 with python3-dnspython, a release build (built here with
# `make release`'s flags). Not part of `make test`.
set -euo pipefail

SIZES=${1:-"200000 1000000"}
ROUNDS=${2:-2}
REPS=${REPS:-3}
SERVERS=${SERVERS:-"scrolloff dnsmasq unbound"}
QPS_SECONDS=${QPS_SECONDS:-8}
LATENCY_SECONDS=${LATENCY_SECONDS:-5}
FIXED_QPS=${FIXED_QPS:-20000}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
REFRESH=${REFRESH:-1}
REFRESH_CLI=${REFRESH_CLI:-idle}

cd "$(dirname "$0")/.."
# This script's own shell and what it runs without a core of its own (seq, date, awk, the CLI) go on
# the client's core: a `perf sched` trace of the refresh (2026-11-25) found the script's forks
# holding the server's core for 0.7–2 ms at a time, which is the bench's cost, not the server's.
taskset -cp "$CLIENT_CPU" $$ >/dev/null
for tool in dnsmasq unbound dnsperf taskset dig; do
    command -v "$tool" >/dev/null || { echo "bench/dns.sh: $tool is missing; run scripts/install-deps.sh (or apt-get install it)" >&2; exit 1; }
done
if [ -z "${SCROLLOFF_BIN:-}" ]; then
    # `make release` itself: the binaries users install, linked the same way (Package.swift).
    make --no-print-directory release >/dev/null
fi
# SCROLLOFF_BIN / SCROLLOFF_CLI run other binaries (an older build, to compare) instead.
BIN=${SCROLLOFF_BIN:-"$(swift build -c release --show-bin-path)/scrolloff-dns"}
CLI=${SCROLLOFF_CLI:-"$(swift build -c release --show-bin-path)/scrolloff"}
# The curated lists of this checkout, wherever the binary lies.
export SCROLLOFF_CATALOG=${SCROLLOFF_CATALOG:-"$PWD/blocklists"}
. bench/lib.sh bench
if [[ " $SERVERS " == *" scrolloff-pg "* ]]; then
    . bench/pg.sh
    pg_start
fi
now_ms() { date +%s%3N; }
rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
# CPU time (user + system) a process has used, in ms: what a step cost the server whatever the
# machine's load, beside the wall time that a shared machine stretches.
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{print int(($14 + $15) * 1000 / hz)}' "/proc/$1/stat"; }
# The bench's own helpers (these polling digs, the list server) run on the client's core under
# SCHED_IDLE: they stand for other machines (a remote list server) or for nothing a user runs (a dig
# every 5 ms), and on the server's core each dig's start-up (a few ms of CPU at normal priority)
# delayed the event loop and the list build it was timing.
answers() { taskset -c "$CLIENT_CPU" chrt --idle 0 dig @127.0.0.1 -p "$1" +time=1 +tries=1 +short "$2" A 2>/dev/null | grep -q "$3"; }
wait_answering() { # port name expected
    for _ in $(seq 1 6000); do
        if answers "$@"; then return 0; fi
        if [ -n "${SERVER_PID:-}" ] && ! kill -0 "$SERVER_PID" 2>/dev/null; then
            echo "the server on port $1 exited; its errors: $(tail -3 "$WORK"/*.err 2>/dev/null)" >&2; exit 1
        fi
        sleep 0.005
    done
    echo "server on port $1 never answered $2 with $3" >&2; return 1
}

# The upstream every server forwards to: answers every name under cache.bench.
UP_PORT=$(free_port)
dnsmasq --no-daemon --conf-file=/dev/null --port="$UP_PORT" --listen-address=127.0.0.1 --bind-interfaces \
    --no-resolv --no-hosts --local-ttl=3600 --address=/cache.bench/10.0.0.1 --pid-file= 2>/dev/null &
PIDS+=($!)
wait_answering "$UP_PORT" x.cache.bench 10.0.0.1

# The list server: lists are added by URL, as people add them.
HTTP_PORT=$(free_port)
taskset -c "$CLIENT_CPU" chrt --idle 0 /usr/bin/python3 -m http.server --bind 127.0.0.1 --directory "$WORK" "$HTTP_PORT" >/dev/null 2>&1 &
PIDS+=($!)
for _ in $(seq 1 500); do curl -fsS "http://127.0.0.1:$HTTP_PORT/" >/dev/null 2>&1 && break; sleep 0.01; done

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
# The refreshed copy: the last 1% dropped, 1% new names (the first of them is probed).
fresh = [f"new{i}.s{i % 9973}.fresh-bench.com" for i in range(max(1, n // 100))]
with open(f"{d}/refreshed.txt", "w") as f:
    f.write("\n".join(fresh[:1] + names[: n - len(fresh)] + fresh[1:]) + "\n")
with open(f"{d}/dnsmasq.conf", "w") as f:
    for name in names:
        f.write(f"address=/{name}/0.0.0.0\n")
with open(f"{d}/unbound-zones.conf", "w") as f:
    for name in names:
        f.write(f'local-zone: "{name}." always_null\n')
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
    echo "baseline.bench" > "$dir/one-name.txt"
    : > "$dir/empty-zones.conf"
}

unbound_conf() { # dir port zones-file
    cat <<EOF
server:
    interface: 127.0.0.1
    port: $2
    num-threads: 1
    do-daemonize: no
    username: ""
    chroot: ""
    directory: "$1"
    pidfile: ""
    use-syslog: no
    logfile: ""
    verbosity: 0
    do-not-query-localhost: no
    module-config: "iterator"
    so-reuseport: no
    include: "$3"
forward-zone:
    name: "."
    forward-addr: 127.0.0.1@$UP_PORT
EOF
}

# Starts one server; sets SERVER_PID, SERVER_PORT, LOAD_MS, ADD_MS. "empty" is the baseline the
# bytes per name are counted over: each server set up as for the list, with no names in it
# (scrolloff: a one-name list added by URL and blocked, so the code that adding a list touches once,
# libcurl, the parser and the builder, is in the baseline as dnsmasq's and unbound's config
# parsers are in theirs); "none" is scrolloff with no list added at all.
start_server() { # kind full|empty|none dir
    local kind=$1 which=$2 dir=$3 port start
    port=$(free_port)
    start=$(now_ms)
    ADD_MS=0
    ADD_CPU_MS=0
    case "$kind" in
    scrolloff|scrolloff-pg)
        # A fresh state folder per run: the blocks (and their cooldowns) live in the database.
        local state="$WORK/state-$port" store=()
        SOCK="$state.sock"
        if [ "$kind" = scrolloff-pg ]; then
            # A fresh database per run too, for the same reason; the server itself is shared.
            pg_createdb "bench_$port"
            store=(--config "$(pg_config "bench_$port" "bench-$port")")
        fi
        taskset -c "$SERVER_CPU" "$BIN" start "${store[@]}" --listen "127.0.0.1:$port" --upstream "127.0.0.1:$UP_PORT" \
            --state-dir "$state" --control-socket "$SOCK" >/dev/null 2>"$WORK/$kind.err" &
        ;;
    dnsmasq)
        local conf="$dir/dnsmasq.conf"; [ "$which" = empty ] && conf="$dir/empty.conf"
        taskset -c "$SERVER_CPU" dnsmasq --no-daemon --conf-file="$conf" --port="$port" --listen-address=127.0.0.1 \
            --bind-interfaces --no-resolv --no-hosts --server="127.0.0.1#$UP_PORT" --cache-size=10000 --pid-file= \
            2>/dev/null &
        ;;
    unbound)
        local zones="$dir/unbound-zones.conf"; [ "$which" = empty ] && zones="$dir/empty-zones.conf"
        unbound_conf "$dir" "$port" "$zones" >"$WORK/unbound-$port.conf"
        taskset -c "$SERVER_CPU" unbound -d -c "$WORK/unbound-$port.conf" 2>"$WORK/unbound.err" &
        ;;
    esac
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
    SERVER_PORT=$port
    wait_answering "$port" x.cache.bench 10.0.0.1
    if [[ $kind == scrolloff* ]]; then
        "$CLI" block instagram tiktok --socket "$SOCK" >/dev/null
        wait_answering "$port" www.instagram.com 0.0.0.0
        if [ "$which" = empty ]; then
            "$CLI" lists add "http://127.0.0.1:$HTTP_PORT/$(basename "$dir")/one-name.txt" --name bench --socket "$SOCK" >/dev/null
            "$CLI" block bench --socket "$SOCK" >/dev/null
            wait_answering "$port" baseline.bench 0.0.0.0
        elif [ "$which" = full ]; then
            local added cpu_before
            added=$(now_ms)
            cpu_before=$(cpu_ms "$SERVER_PID")
            "$CLI" lists add "http://127.0.0.1:$HTTP_PORT/$(basename "$dir")/blocklist.txt" --name bench --socket "$SOCK" >/dev/null
            "$CLI" block bench --socket "$SOCK" >/dev/null
            wait_answering "$port" "$(head -1 "$dir/blocklist.txt")" 0.0.0.0
            ADD_MS=$(( $(now_ms) - added ))
            ADD_CPU_MS=$(( $(cpu_ms "$SERVER_PID") - cpu_before ))
        fi
    elif [ "$which" = full ]; then
        wait_answering "$port" "$(head -1 "$dir/blocklist.txt")" 0.0.0.0
    fi
    LOAD_MS=$(( $(now_ms) - start ))
}

stop_server() { kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; }

dnsperf_run() { taskset -c "$CLIENT_CPU" dnsperf -s 127.0.0.1 -p "$SERVER_PORT" -d "$1" "${@:2}" 2>&1; }

# "mean p50 p99 answered" from dnsperf -v output (one line per query ending with its latency in s).
latency_of() {
    awk '$1 == ">" {print $NF * 1000000}' | sort -n \
        | awk '{a[NR]=$1; s+=$1} END {if (NR==0) {print "nan nan nan 0"; exit} printf "%.0f %.0f %.0f %d\n", s/NR, a[int(NR*0.5)+1], a[int(NR*0.99)], NR}'
}

# One round at one size. Every server is started (one after the other, each timed as above), then
# they are measured by turns: REPS passes of a QPS run on each, then REPS passes of a latency run on
# each, so that all of them meet the same phases of a shared machine. On this VM the same server's
# max QPS moves by 15-20% from one minute to the next; measured one server after another, that
# drift landed on whichever server ran in a slow minute and swung the ratios by as much. An idle
# server waiting for its turn costs the one measured nothing (they all sit blocked in their poll).
# Prints a row per server and pass and appends "kind size load rss qps mean p50 p99 lost add" to
# $WORK/rows.
measure_round() { # size
    local n=$1 dir="$WORK/$1" kind rep out lat
    declare -A pid port load add add_cpu rss qps lost lats
    for kind in $SERVERS; do
        start_server "$kind" full "$dir"
        pid[$kind]=$SERVER_PID; port[$kind]=$SERVER_PORT; load[$kind]=$LOAD_MS; add[$kind]=$ADD_MS; add_cpu[$kind]=$ADD_CPU_MS
        rss[$kind]=$(rss_kib "$SERVER_PID")
        [ "$kind" = scrolloff ] && SCROLLOFF_SOCK=$SOCK
        dnsperf_run "$dir/queries.txt" -l 2 -c 4 -q 200 >/dev/null           # warm the cache
    done
    for rep in $(seq 1 "$REPS"); do
        for kind in $SERVERS; do
            SERVER_PID=${pid[$kind]}; SERVER_PORT=${port[$kind]}
            out=$(dnsperf_run "$dir/queries.txt" -l "$QPS_SECONDS" -c 4 -q 500)
            qps[$kind,$rep]=$(awk '/Queries per second/ {print $4}' <<<"$out")
            lost[$kind,$rep]=$(awk '/Queries lost/ {print $3}' <<<"$out")
        done
    done
    for rep in $(seq 1 "$REPS"); do
        for kind in $SERVERS; do
            SERVER_PID=${pid[$kind]}; SERVER_PORT=${port[$kind]}
            lats[$kind,$rep]=$(dnsperf_run "$dir/queries.txt" -l "$LATENCY_SECONDS" -c 4 -Q "$FIXED_QPS" -v | latency_of)
        done
    done
    local expected=$(( FIXED_QPS * LATENCY_SECONDS )) after mean p50 p99 answered
    for kind in $SERVERS; do
        after=$(rss_kib "${pid[$kind]}")
        [ "$after" -gt "${rss[$kind]}" ] && rss[$kind]=$after
        for rep in $(seq 1 "$REPS"); do
            read -r mean p50 p99 answered <<<"${lats[$kind,$rep]}"
            printf "%-9s %8s  in force %6s ms, server CPU %5s ms (start %6s ms)  %8s KiB %8s qps  @%dk: mean %5s µs p50 %5s µs p99 %6s µs answered %s/%s  lost %s\n" \
                "$kind" "$n" "${add[$kind]}" "${add_cpu[$kind]}" "${load[$kind]}" "${rss[$kind]}" "${qps[$kind,$rep]}" $((FIXED_QPS / 1000)) \
                "$mean" "$p50" "$p99" "$answered" "$expected" "${lost[$kind,$rep]}"
            echo "$kind $n ${load[$kind]} ${rss[$kind]} ${qps[$kind,$rep]} $mean $p50 $p99 ${lost[$kind,$rep]} ${add[$kind]}" >>"$WORK/rows"
        done
    done
    if [[ " $SERVERS " == *" scrolloff "* ]] && [ "$REFRESH" = 1 ] && [ "$n" = "$LARGEST" ]; then
        SERVER_PID=${pid[scrolloff]}; SERVER_PORT=${port[scrolloff]}; SOCK=$SCROLLOFF_SOCK
        refresh_during_load "$dir"
    fi
    for kind in $SERVERS; do SERVER_PID=${pid[$kind]}; stop_server; done
}

# p99 while the list is refreshed under load, and the time until a new name is in force.
refresh_during_load() { # dir
    local dir=$1 lat started done_ms name mean p50 p99 answered cpu_before cpu_used
    name=$(head -1 "$dir/refreshed.txt")
    cp "$dir/blocklist.txt" "$dir/original.txt"
    cp "$dir/refreshed.txt" "$dir/blocklist.txt"
    touch -d '+1 minute' "$dir/blocklist.txt"   # a newer Last-Modified than the copy's
    dnsperf_run "$dir/queries.txt" -l "$LATENCY_SECONDS" -c 4 -Q "$FIXED_QPS" -v >"$WORK/refresh.lat" &
    local perf_pid=$!
    sleep 1
    # One poller process for the new name, not a dig forked every 5 ms: those forks shared the
    # client's core with dnsperf, whose receiving they delayed (the latency it reports).
    taskset -c "$CLIENT_CPU" chrt --idle 0 /usr/bin/python3 - "$SERVER_PORT" "$name" 0.0.0.0 >"$WORK/in-force" <<'PY' &
import sys, time, dns.message, dns.query
port, name, want = int(sys.argv[1]), sys.argv[2], sys.argv[3]
query = dns.message.make_query(name, "A")
end = time.monotonic() + 60
while time.monotonic() < end:
    try:
        reply = dns.query.udp(query, "127.0.0.1", port=port, timeout=1)
        if any(want in rr.to_text() for rrset in reply.answer for rr in rrset):
            print(int(time.time() * 1000))
            sys.exit(0)
    except Exception:
        pass
    time.sleep(0.005)
sys.exit(1)
PY
    local poller=$!
    started=$(now_ms)
    cpu_before=$(cpu_ms "$SERVER_PID")
    # The CLI that asks for the refresh runs under SCHED_IDLE (REFRESH_CLI=normal: as started from a
    # shell): its own start-up, ~20 ms of CPU in slices of up to one 4 ms tick on either core,
    # delayed dnsperf and the event loop alike (`perf sched`), and a timer's refresh has no CLI.
    local trigger=(chrt --idle 0)
    [ "$REFRESH_CLI" = normal ] && trigger=()
    "${trigger[@]}" "$CLI" lists update bench --socket "$SOCK" >/dev/null
    wait "$poller" || { echo "the refreshed list's new name $name never answered 0.0.0.0" >&2; exit 1; }
    done_ms=$(( $(cat "$WORK/in-force") - started ))
    cpu_used=$(( $(cpu_ms "$SERVER_PID") - cpu_before ))
    wait "$perf_pid"
    lat=$(latency_of <"$WORK/refresh.lat")
    read -r mean p50 p99 answered <<<"$lat"
    cp "$dir/original.txt" "$dir/blocklist.txt"
    printf "scrolloff %8s  refresh under %dk QPS (%s CLI): new name in force after %s ms (server CPU %s ms, answering included); during the run mean %s µs p50 %s µs p99 %s µs, answered %s/%s\n" \
        "$(basename "$dir")" $((FIXED_QPS / 1000)) "$REFRESH_CLI" "$done_ms" "$cpu_used" "$mean" "$p50" "$p99" "$answered" $(( FIXED_QPS * LATENCY_SECONDS ))
    echo "$(basename "$dir") $done_ms $mean $p50 $p99 $answered" >>"$WORK/refresh"
}

baseline_rss() { # kind empty|none
    start_server "$1" "$2" "$WORK/$(echo "$SIZES" | awk '{print $1}')"
    sleep 1
    rss_kib "$SERVER_PID"
    # What the baseline is made of, on standard error so the value above stays one number.
    awk -v kind="$1" -v which="$2" '/^Rss(Anon|File|Shmem):/ {parts = parts " " $1 " " $2 " KiB"} END {print kind " baseline (" which "):" parts}' \
        "/proc/$SERVER_PID/status" >&2
    stop_server
}

LARGEST=$(tr ' ' '\n' <<<"$SIZES" | sort -n | tail -1)
echo "scrolloff-dns ${SCROLLOFF_BIN:-"built from $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' with changes')"} vs dnsmasq $(dnsmasq --version | head -1 | awk '{print $3}'), unbound $(unbound -V | awk 'NR==1 {print $2}'); $(nproc --all) cores, load $(cut -d' ' -f1-3 /proc/loadavg); server on CPU $SERVER_CPU, dnsperf on CPU $CLIENT_CPU"
echo "mix: ~90% blocked (names and subdomains), ~10% cached; QPS: dnsperf -c 4 -q 500 for ${QPS_SECONDS}s; latency: -Q $FIXED_QPS for ${LATENCY_SECONDS}s"
for n in $SIZES; do make_inputs "$n"; done
declare -A BASE
for kind in $SERVERS; do BASE[$kind]=$(baseline_rss "$kind" empty); done
echo "baseline RSS with an empty list: $(for k in $SERVERS; do printf '%s %s KiB  ' "$k" "${BASE[$k]}"; done)"
NO_LIST=""
if [[ " $SERVERS " == *" scrolloff "* ]]; then
    NO_LIST=$(baseline_rss scrolloff none)
    echo "scrolloff with no list added at all: $NO_LIST KiB (a one-name list by URL adds $(( BASE[scrolloff] - NO_LIST )) KiB)"
fi
for n in $SIZES; do
    for round in $(seq 1 "$ROUNDS"); do
        measure_round "$n"
    done
done

echo
echo "medians over $ROUNDS rounds of $REPS passes each (min–max in brackets); ratios are scrolloff / the better peer:"
BASES=$(for k in $SERVERS; do printf '%s=%s ' "$k" "${BASE[$k]}"; done)
/usr/bin/python3 - "$WORK/rows" "$BASES" "$NO_LIST" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
base = dict(kv.split("=") for kv in sys.argv[2].split())
no_list = int(sys.argv[3]) if sys.argv[3] else None
cols = {"load": 2, "rss": 3, "qps": 4, "mean": 5, "p50": 6, "p99": 7, "lost": 8, "add": 9}
def vals(kind, n, col):
    return [float(r[cols[col]]) for r in rows if r[0] == kind and r[1] == n and r[cols[col]] not in ("nan", "")]
def med(kind, n, col):
    v = vals(kind, n, col)
    return statistics.median(v) if v else float("nan")
def spread(kind, n, col, scale=1.0):
    v = vals(kind, n, col)
    return f"{min(v)*scale:.0f}–{max(v)*scale:.0f}" if v else "-"
kinds = [k for k in ["scrolloff", "scrolloff-pg", "dnsmasq", "unbound"] if k in base]
for n in sorted({r[1] for r in rows}, key=int):
    size = int(n)
    print(f"\n{size:,} names")
    print(f"  {'server':9} {'in force ms':>12} {'RSS MiB':>8} {'B/name':>7} {'max QPS':>18} {'p50 µs':>12} {'p99 µs':>14} lost")
    per = {}
    for k in kinds:
        per[k] = (med(k, n, "rss") - int(base[k])) * 1024 / size
        load = med(k, n, "add") if k.startswith("scrolloff") else med(k, n, "load")
        print(f"  {k:9} {load:12.0f} {med(k, n, 'rss')/1024:8.1f} {per[k]:7.0f} {med(k, n, 'qps'):8.0f} [{spread(k, n, 'qps')}]"
              f" {med(k, n, 'p50'):5.0f} [{spread(k, n, 'p50')}] {med(k, n, 'p99'):6.0f} [{spread(k, n, 'p99')}] {med(k, n, 'lost'):.0f}")
    if "scrolloff" in kinds and "scrolloff-pg" in kinds:
        s, p = "scrolloff", "scrolloff-pg"
        print(f"  PostgreSQL / SQLite: QPS {med(p, n, 'qps')/med(s, n, 'qps'):.2f}x, p50 {med(p, n, 'p50')/med(s, n, 'p50'):.2f}x,"
              f" p99 {med(p, n, 'p99')/med(s, n, 'p99'):.2f}x (goal: equal)")
    peers = [k for k in kinds if not k.startswith("scrolloff")]
    if "scrolloff" in kinds and peers:
        s = "scrolloff"
        best_qps = max(peers, key=lambda k: med(k, n, "qps"))
        best_p99 = min(peers, key=lambda k: med(k, n, "p99"))
        best_p50 = min(peers, key=lambda k: med(k, n, "p50"))
        best_mem = min(peers, key=lambda k: per[k])
        print(f"  ratios: QPS {med(s, n, 'qps')/med(best_qps, n, 'qps'):.2f}x {best_qps} (goal >= 1.2)"
              f"; bytes/name {per[s]/per[best_mem]:.2f}x {best_mem}, {per[s]/per['dnsmasq']:.2f}x dnsmasq (goal <= 0.5)" if 'dnsmasq' in per else "")
        if no_list is not None and "dnsmasq" in per:
            over_none = (med(s, n, "rss") - no_list) * 1024 / size
            print(f"          over no list at all: {over_none:.0f} B/name, {over_none/per['dnsmasq']:.2f}x dnsmasq")
        print(f"          p50 {med(s, n, 'p50')/med(best_p50, n, 'p50'):.2f}x {best_p50}, p99 {med(s, n, 'p99')/med(best_p99, n, 'p99'):.2f}x {best_p99} (goal <= 1)"
              f"; in force {med(s, n, 'add'):.0f} ms after `lists add` (goal <= 1500 ms at 1 M)")
PY
if [ -s "$WORK/refresh" ]; then
    echo
    echo "refresh of the largest list under ${FIXED_QPS} QPS (names, in force ms, mean, p50, p99 µs, answered):"
    cat "$WORK/refresh"
fi
