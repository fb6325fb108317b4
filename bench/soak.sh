#!/usr/bin/env bash
# Soak benchmark of the forwarder (issue 11): COUNT unique names, each a cache miss, forwarded to a
# local dnsmasq that answers every name with TTL 0 (nothing may be cached), so every query is a new
# upstream exchange. Prints each server's RSS after the first 100,000 queries, after every further
# STEP, and at the end, with the change from 100k to the end (goal: within ±5%).
# The same run measures unbound and dnsmasq as forwarders for comparison.
#
# Usage: bench/soak.sh [COUNT] [SERVERS]     e.g. bench/soak.sh 10000000 "scrolloff unbound dnsmasq"
# Env:   STEP (RSS every STEP queries, default COUNT/10), SOAK_TTL (upstream TTL, default 0; with a TTL
#        the cache fills to its bound first), QPS_LIMIT (dnsperf -Q, default none), SCROLLOFF_ARGS
#        (more `scrolloff-dns start` options, e.g. "--config FILE", to measure one part switched off),
#        SOAK_SCRATCH (a build folder other than .build).
# Needs: dnsmasq, unbound, dnsperf, taskset, a release build with `make release`'s flags (built here).
# Not part of `make test`; the short forwarded-query RSS check there is ForwarderHardeningEndToEndTests.
set -euo pipefail

COUNT=${1:-10000000}
SERVERS=${2:-"scrolloff unbound dnsmasq"}
STEP=${STEP:-$(( COUNT / 10 ))}
SOAK_TTL=${SOAK_TTL:-0}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
FIRST=100000
[ "$COUNT" -gt "$FIRST" ] || { echo "bench/soak.sh: COUNT must be more than $FIRST" >&2; exit 1; }
[ "$STEP" -ge 1 ] || STEP=$COUNT

cd "$(dirname "$0")/.."
for tool in dnsmasq unbound dnsperf taskset; do
    command -v "$tool" >/dev/null || { echo "bench/soak.sh: $tool is missing; install it (Debian: apt-get install $tool)" >&2; exit 1; }
done
# The flags of `make release` (static Swift runtime), so the two never rebuild each other.
# SOAK_SCRATCH: another build folder (with a copy of .build's checkouts), so a debug build of the
# tests can go on in .build meanwhile.
SCRATCH=(${SOAK_SCRATCH:+--scratch-path "$SOAK_SCRATCH"})
swift build "${SCRATCH[@]}" -c release --static-swift-stdlib --product scrolloff-dns >/dev/null
BIN="$(swift build "${SCRATCH[@]}" -c release --show-bin-path)/scrolloff-dns"
WORK=$(mktemp -d /tmp/scrolloff-soak.XXXXXX)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
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
            --state-dir "$WORK/state" --control-socket "$WORK/control.sock" --catalog "$PWD/blocklists" --threads 1 --log-level warning ${SCROLLOFF_ARGS:-} \
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

run_part() { # file; prints "completed lost qps"
    taskset -c "$CLIENT_CPU" dnsperf -s 127.0.0.1 -p "$SERVER_PORT" -d "$1" -n 1 -c 4 -q 500 -t 5 \
        ${QPS_LIMIT:+-Q "$QPS_LIMIT"} 2>&1 \
        | awk '/Queries completed/ {c=$3} /Queries lost/ {l=$3} /Queries per second/ {q=$4} END {printf "%s %s %.0f\n", c, l, q}'
}

echo "soak: $COUNT unique names, upstream TTL $SOAK_TTL, server on CPU $SERVER_CPU, dnsperf -c 4 -q 500 on CPU $CLIENT_CPU"
echo "versions: scrolloff-dns $(git rev-parse --short HEAD 2>/dev/null || echo '?'), unbound $(unbound -V | head -1 | awk '{print $2}'), dnsmasq $(dnsmasq --version | head -1 | awk '{print $3}')"
queries 0 "$FIRST" "$WORK/first.txt"
for kind in $SERVERS; do
    start_server "$kind"
    start_rss=$(rss_kib "$SERVER_PID")
    read -r done lost qps <<<"$(run_part "$WORK/first.txt")"
    base=$(rss_kib "$SERVER_PID")
    printf "%-9s start %8s KiB   at %9d: %8s KiB (%s qps, %s lost)\n" "$kind" "$start_rss" "$FIRST" "$base" "$qps" "$lost"
    sent=$FIRST
    while [ "$sent" -lt "$COUNT" ]; do
        next=$(( sent + STEP > COUNT ? COUNT : sent + STEP ))
        queries "$sent" "$next" "$WORK/part.txt"
        read -r done lost qps <<<"$(run_part "$WORK/part.txt")"
        sent=$next
        printf "%-9s                      at %9d: %8s KiB (%s qps, %s lost)\n" "$kind" "$sent" "$(rss_kib "$SERVER_PID")" "$qps" "$lost"
    done
    end=$(rss_kib "$SERVER_PID")
    awk -v k="$kind" -v b="$base" -v e="$end" -v n="$COUNT" \
        'BEGIN { printf "%-9s RSS at 100k %d KiB, at %d %d KiB: %+.1f%%\n", k, b, n, e, (e - b) * 100 / b }'
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
done
