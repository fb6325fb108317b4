#!/usr/bin/env bash
# Soak benchmark of the forwarder (SPEC §9.6): COUNT unique names, each a cache miss, forwarded to a
# local dnsmasq that answers every name with TTL 0 (nothing may be cached), so every query is a new
# upstream exchange. Prints each server's RSS once the cache is full (after CACHE_SIZE names, the
# cache's bound in answers, default 100,000 as in the helper), after every further STEP, and at
# the end, with the change from "cache full" to the end. The goal is no growth once every bounded
# structure is full: within ±5%. With the default TTL 0 nothing is cached at all (only the
# questions in flight have an entry), so "cache full" is simply the warm-up point; with SOAK_TTL > 0
# the cache holds CACHE_SIZE answers from then on, evicting the oldest for each new name.
# For scrolloff-dns each line also gives the anonymous (heap, stacks) part of RSS and glibc's own
# account (malloc_info, asked for with SIGUSR2): bytes in use and bytes held free in its arenas.
# The same run measures unbound and dnsmasq as forwarders for comparison.
#
# Usage: bench/soak.sh [COUNT] [SERVERS]     e.g. bench/soak.sh 10000000 "scrolloff unbound dnsmasq"
# Env:   STEP (RSS every STEP queries, default COUNT/10), SOAK_TTL (upstream TTL, default 0),
#        CACHE_SIZE (the helper's --cache-size, and the names sent before the first figure; default
#        100000), QPS_LIMIT (dnsperf -Q, default none), SCROLLOFF_ARGS
#        (more `scrolloff-dns start` options, e.g. "--config FILE", to measure one part switched off),
#        SOAK_SCRATCH (a build folder other than .build), SCROLLOFF_BIN (another scrolloff-dns, not built here).
# Needs: dnsmasq, unbound, dnsperf, taskset, a release build with `make release`'s flags (built here).
# Not part of `make test`; the short forwarded-query RSS check there is ForwarderHardeningEndToEndTests.
set -euo pipefail

COUNT=${1:-10000000}
SERVERS=${2:-"scrolloff unbound dnsmasq"}
STEP=${STEP:-$(( COUNT / 10 ))}
SOAK_TTL=${SOAK_TTL:-0}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
CACHE_SIZE=${CACHE_SIZE:-100000}
FIRST=$CACHE_SIZE
[ "$COUNT" -gt "$FIRST" ] || { echo "bench/soak.sh: COUNT must be more than $FIRST" >&2; exit 1; }
[ "$STEP" -ge 1 ] || STEP=$COUNT

cd "$(dirname "$0")/.."
for tool in dnsmasq unbound dnsperf taskset; do
    command -v "$tool" >/dev/null || { echo "bench/soak.sh: $tool is missing; install it (Debian: apt-get install $tool)" >&2; exit 1; }
done
# `make release` itself, so the two never rebuild each other and this runs what users install.
# SOAK_SCRATCH: another build folder (with a copy of .build's checkouts), so a debug build of the
# tests can go on in .build meanwhile.
SCRATCH=(${SOAK_SCRATCH:+--scratch-path "$SOAK_SCRATCH"})
# SCROLLOFF_BIN=…: measure another binary (an older build, to compare), with no build here.
if [ -z "${SCROLLOFF_BIN:-}" ]; then
    make --no-print-directory release SWIFT_FLAGS="${SCRATCH[*]}" >/dev/null
fi
BIN=${SCROLLOFF_BIN:-"$(swift build "${SCRATCH[@]}" -c release --show-bin-path)/scrolloff-dns"}
. bench/lib.sh soak
rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
anon_kib() { awk '/^Anonymous:/ {print $2}' "/proc/$1/smaps_rollup"; }
# glibc's totals for the helper (its SIGUSR2 writes malloc_info's XML to standard error): "in use
# KiB, free KiB". In use = what the arenas took from the kernel - their free chunks + mmap'd blocks.
allocator_kib() { # pid err-file
    local before
    before=$(grep -c '</malloc>' "$2" 2>/dev/null || true)
    kill -USR2 "$1"
    for _ in $(seq 1 100); do
        [ "$(grep -c '</malloc>' "$2" 2>/dev/null || true)" -gt "${before:-0}" ] && break
        sleep 0.05
    done
    awk '/<malloc / {fast = rest = mmap = cur = 0; tail = 0} /<\/heap>/ {tail = 1; fast = rest = mmap = cur = 0}
         tail && /<total type="fast"/ {match($0, /size="[0-9]+"/); fast = substr($0, RSTART + 6, RLENGTH - 7)}
         tail && /<total type="rest"/ {match($0, /size="[0-9]+"/); rest = substr($0, RSTART + 6, RLENGTH - 7)}
         tail && /<total type="mmap"/ {match($0, /size="[0-9]+"/); mmap = substr($0, RSTART + 6, RLENGTH - 7)}
         tail && /<system type="current"/ {match($0, /size="[0-9]+"/); cur = substr($0, RSTART + 6, RLENGTH - 7)}
         END {printf "%d %d", (cur - fast - rest + mmap) / 1024, (fast + rest) / 1024}' "$2"
}
figures() { # kind pid; RSS, and for scrolloff the anonymous part and glibc's in use / free
    if [ "$1" = scrolloff ]; then
        read -r used free <<<"$(allocator_kib "$2" "$WORK/scrolloff.err")"
        printf "%8s KiB (anon %s, malloc in use %s, free in arenas %s)" "$(rss_kib "$2")" "$(anon_kib "$2")" "$used" "$free"
    else
        printf "%8s KiB" "$(rss_kib "$2")"
    fi
}
wait_answering() { # port name
    for _ in $(seq 1 3000); do
        if dig @127.0.0.1 -p "$1" +time=1 +tries=1 "$2" A 2>/dev/null | grep -q "status: NOERROR"; then return 0; fi
        sleep 0.01
    done
    echo "server on port $1 never answered" >&2; return 1
}

# The upstream: every name under soak.test is 10.0.0.1, with TTL $SOAK_TTL, nothing cached there.
UP_PORT=$(free_port)
dnsmasq --no-daemon --conf-file=/dev/null --port="$UP_PORT" --listen-address=127.0.0.1 --bind-interfaces \
    --no-resolv --no-hosts --cache-size=0 --local-ttl="$SOAK_TTL" --address=/soak.test/10.0.0.1 --pid-file= 2>/dev/null &
PIDS+=($!)
wait_answering "$UP_PORT" ready.soak.test

# Query files: the first 100k names, then STEP-sized parts, all names unique across the run.
queries() { # from to file
    awk -v from="$1" -v to="$2" 'BEGIN { for (i = from; i < to; i++) printf "q%d.soak.test A\n", i }' >"$3"
}

start_server() { # kind; sets SERVER_PID and SERVER_PORT
    local kind=$1 port
    port=$(free_port)
    case "$kind" in
    scrolloff)
        rm -rf "$WORK/state"
        taskset -c "$SERVER_CPU" "$BIN" start --listen "127.0.0.1:$port" --upstream "127.0.0.1:$UP_PORT" \
            --state-dir "$WORK/state" --control-socket "$WORK/control.sock" --catalog "$PWD/blocklists" --threads 1 --log-level warning --cache-size "$CACHE_SIZE" ${SCROLLOFF_ARGS:-} \
            >/dev/null 2>"$WORK/scrolloff.err" &
        ;;
    unbound)
        cat >"$WORK/unbound.conf" <<EOF
server:
    interface: 127.0.0.1
    port: $port
    do-daemonize: no
    use-syslog: no
    logfile: ""
    username: ""
    chroot: ""
    pidfile: ""
    directory: "$WORK"
    num-threads: 1
    do-not-query-localhost: no
    access-control: 127.0.0.0/8 allow
    domain-insecure: "soak.test"
    # unbound answers test. itself by default (RFC 6761); forward it like any other name.
    local-zone: "test." nodefault
    module-config: "iterator"
    verbosity: 0
forward-zone:
    name: "."
    forward-addr: 127.0.0.1@$UP_PORT
EOF
        taskset -c "$SERVER_CPU" unbound -d -c "$WORK/unbound.conf" 2>"$WORK/unbound.err" &
        ;;
    dnsmasq)
        taskset -c "$SERVER_CPU" dnsmasq --no-daemon --conf-file=/dev/null --port="$port" --listen-address=127.0.0.1 \
            --bind-interfaces --no-resolv --no-hosts --server="127.0.0.1#$UP_PORT" --cache-size=10000 --pid-file= \
            2>/dev/null &
        ;;
    esac
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
    SERVER_PORT=$port
    wait_answering "$port" ready.soak.test
}

# RSS every 0.5 s while a part runs: it moves by several MiB within seconds (the queries in
# flight, glibc's periodic trim), so one reading at the end of a part is noise; the median is not.
sample_rss() { # pid file
    while kill -0 "$1" 2>/dev/null; do rss_kib "$1" >>"$2" 2>/dev/null || true; sleep 0.5; done
}
median_kib() { sort -n "$1" | awk '{v[NR] = $1} END {if (NR) print v[int((NR + 1) / 2)]; else print 0}'; }
range_kib() { sort -n "$1" | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%s–%s", lo, hi}'; }

run_part() { # file; prints "completed lost qps"
    taskset -c "$CLIENT_CPU" dnsperf -s 127.0.0.1 -p "$SERVER_PORT" -d "$1" -n 1 -c 4 -q 500 -t 5 \
        ${QPS_LIMIT:+-Q "$QPS_LIMIT"} 2>&1 \
        | awk '/Queries completed/ {c=$3} /Queries lost/ {l=$3} /Queries per second/ {q=$4} END {printf "%s %s %.0f\n", c, l, q}'
}

echo "soak: $COUNT unique names, upstream TTL $SOAK_TTL, cache bound $CACHE_SIZE answers, server on CPU $SERVER_CPU, dnsperf -c 4 -q 500 on CPU $CLIENT_CPU"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$SOAK_TTL" = 0 ]; then
    echo "TTL 0: nothing is cached, so the first figure is the warm-up point; the goal is the end within ±5% of it"
else
    echo "TTL $SOAK_TTL: the cache is full ($CACHE_SIZE answers) at the first figure; the goal is no growth after it (±5%)"
fi
echo "versions: scrolloff-dns $(git rev-parse --short HEAD 2>/dev/null || echo '?'), unbound $(unbound -V | head -1 | awk '{print $2}'), dnsmasq $(dnsmasq --version | head -1 | awk '{print $3}')"
queries 0 "$FIRST" "$WORK/first.txt"
for kind in $SERVERS; do
    start_server "$kind"
    start_rss=$(rss_kib "$SERVER_PID")
    read -r done lost qps <<<"$(run_part "$WORK/first.txt")"
    printf "%-9s start %8s KiB   cache full at %9d: %s (%s qps, %s lost)\n" "$kind" "$start_rss" "$FIRST" "$(figures "$kind" "$SERVER_PID")" "$qps" "$lost"
    sent=$FIRST
    base=""
    while [ "$sent" -lt "$COUNT" ]; do
        next=$(( sent + STEP > COUNT ? COUNT : sent + STEP ))
        queries "$sent" "$next" "$WORK/part.txt"
        : >"$WORK/rss.txt"
        sample_rss "$SERVER_PID" "$WORK/rss.txt" &
        sampler=$!
        read -r done lost qps <<<"$(run_part "$WORK/part.txt")"
        kill "$sampler" 2>/dev/null || true
        wait "$sampler" 2>/dev/null || true
        sent=$next
        median=$(median_kib "$WORK/rss.txt")
        # The first part after the cache is full is the reference: the working set of a full load.
        [ -n "$base" ] || base=$median
        printf "%-9s   median %8s KiB (%s) at %9d: %s (%s qps, %s lost)\n" "$kind" "$median" "$(range_kib "$WORK/rss.txt")" "$sent" \
            "$(figures "$kind" "$SERVER_PID")" "$qps" "$lost"
    done
    end=$median
    awk -v k="$kind" -v b="$base" -v e="$end" -v f="$FIRST" -v s="$STEP" -v n="$COUNT" \
        'BEGIN { printf "%-9s median RSS in the first STEP after the cache is full (%d–%d) %d KiB, in the last (to %d) %d KiB: %+.1f%% (goal ±5%%)\n", k, f, f + s, b, n, e, (e - b) * 100 / b }'
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
done
