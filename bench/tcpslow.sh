#!/usr/bin/env bash
# Slow DNS-over-TCP readers against scrolloff-dns, unbound and dnsmasq (SPEC §9.6).
#
# Clients that pipeline queries over TCP and never read a reply (bench/tcpslow.py flood), from 10
# IPv4 loopback addresses (127.0.0.10–19) and 5 IPv6 ones, each with 32 connections and opening
# again whatever the server closes. Meanwhile two ordinary clients, 127.0.0.2 and an IPv6 address,
# each send QUERIES queries one after another over TCP (2 s each at most). Printed per server: the
# ordinary clients' answered count, failures by kind, p50/p99/max; the server's RSS before, at its
# peak during, and 3 s after the flood; the slow readers' connections the server held at most.
#
# As root everything runs in a network namespace of its own (scrolloff-tcpslow-tcp-PID, removed on
# exit) with the IPv6 addresses fd7c:0:0:N::1 on its loopback; otherwise on the host's loopback
# with ::1 as the one IPv6 source.
#
# Usage: bench/tcpslow.sh            SERVERS="scrolloff unbound dnsmasq" FLOOD_SECONDS=12 QUERIES=400
#   SCROLLOFF_BIN=… SCROLLOFF_CLI=… measure other binaries (no build).
#   SCROLLOFF_ARGS="--config FILE" adds arguments to scrolloff-dns start (to try other [dns] limits).
#   TRACE_DIR=DIR writes each ordinary client's answers (start, ms taken) to DIR/SERVER-v4.txt, -v6.txt.
#   SERVER_CPU=0 LOAD_CPU=1 pin the server to one CPU and the flood and clients to another, as a
#   household's resolver and its LAN devices are different machines (the flood's own CPU and the
#   loopback copying it causes are then not taken from the server).
# Needs: python3-dnspython, unbound, dnsmasq, iproute2; a release build (built here). Not part of
# `make test`. Bounded: every flood stops after FLOOD_SECONDS, every query after 2 s.
set -euo pipefail
# With autogroups (sched_autogroup_enabled), nice weighs only within a session: `nice -n -15` alone
# did not keep builds in other sessions off the server's CPU. So the script runs in a session of its
# own whose group gets the script's nice (as root; a plain user may only raise it).
if [ -z "${TCPSLOW_SESSION:-}" ] && [ -w /proc/self/autogroup ] && command -v setsid >/dev/null; then
    TCPSLOW_SESSION=1 exec setsid --wait "$0" "$@"
fi
[ -w /proc/self/autogroup ] && echo "$(nice)" >/proc/self/autogroup 2>/dev/null || true

SERVERS=${SERVERS:-"scrolloff unbound dnsmasq"}
FLOOD_SECONDS=${FLOOD_SECONDS:-12}
QUERIES=${QUERIES:-400}

cd "$(dirname "$0")/.."
HERE=$PWD
for tool in python3 ip ss; do
    command -v "$tool" >/dev/null || { echo "bench/tcpslow.sh: $tool is missing" >&2; exit 1; }
done
/usr/bin/python3 -c 'import dns.message' 2>/dev/null || { echo "bench/tcpslow.sh: python3-dnspython is missing" >&2; exit 1; }
if [ -z "${SCROLLOFF_BIN:-}" ]; then
    make --no-print-directory release >/dev/null
fi
if [ -z "${SCROLLOFF_BIN:-}" ] || [ -z "${SCROLLOFF_CLI:-}" ]; then RELEASE=$(swift build -c release --show-bin-path); fi
BIN=${SCROLLOFF_BIN:-"$RELEASE/scrolloff-dns"}
CLI=${SCROLLOFF_CLI:-"$RELEASE/scrolloff"}
export SCROLLOFF_CATALOG=${SCROLLOFF_CATALOG:-"$PWD/blocklists"}

SRV=(); LOAD=()
[ -n "${SERVER_CPU:-}" ] && SRV=(taskset -c "$SERVER_CPU")
[ -n "${LOAD_CPU:-}" ] && LOAD=(taskset -c "$LOAD_CPU")

WORK=$(mktemp -d /tmp/scrolloff-tcpslow-tcp.XXXXXX)
NS=""
PIDS=()
MAIN=$BASHPID
cleanup() {
    # Only the script itself: a command substitution that a signal ends runs the trap too.
    [ "$BASHPID" = "$MAIN" ] || exit 1
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    [ -n "$NS" ] && ip netns delete "$NS" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
trap "exit 1" INT TERM

V4_SOURCES=$(for n in $(seq 10 19); do printf '127.0.0.%d ' "$n"; done)
if [ "$(id -u)" = 0 ]; then
    NS=scrolloff-tcpslow-tcp-$$
    ip netns add "$NS"
    IN=(ip netns exec "$NS")
    "${IN[@]}" ip link set lo up
    V6_SOURCES=""
    for n in 1 2 3 4 5 99; do
        # One /64 each: a household's devices each have their own address, an attacker any number.
        "${IN[@]}" ip -6 addr add "fd7c:0:0:$n::1/128" dev lo nodad
        [ "$n" != 99 ] && V6_SOURCES+="fd7c:0:0:$n::1 "
    done
    V6_CLIENT=fd7c:0:0:99::1
else
    IN=()
    V6_SOURCES="::1"
    V6_CLIENT=::1
fi
run() { "${IN[@]}" "$@"; }
free_port() { run /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
export DETAIL=${DETAIL:-}
answers() { run /usr/bin/python3 - "$1" "${2:-127.0.0.1}" <<'PY' >/dev/null 2>&1
import socket, struct, sys, dns.message
w = dns.message.make_query("host.test", "A").to_wire()
s = socket.create_connection((sys.argv[2], int(sys.argv[1])), timeout=1)
s.sendall(struct.pack(">H", len(w)) + w)
assert len(s.recv(2)) == 2
PY
}
wait_answering() { for _ in $(seq 1 500); do answers "$@" && return 0; sleep 0.02; done; echo "nothing answers on $1" >&2; return 1; }

# The upstream: answers host.test as dnsmasq's own zone. On ::1: with a global IPv6 address on the
# namespace's loopback, scrolloff-dns's questions to an upstream on 127.0.0.1 went unanswered.
UP_PORT=$(free_port)
"${IN[@]}" "${LOAD[@]}" dnsmasq --no-daemon --conf-file=/dev/null --port="$UP_PORT" --listen-address=::1 --bind-interfaces \
    --no-resolv --no-hosts --address=/host.test/10.0.0.7 --address=/blocked.test/10.0.0.8 --pid-file= 2>/dev/null &
PIDS+=($!)
wait_answering "$UP_PORT" ::1

start_server() { # kind port; sets SERVER_PID
    local kind=$1 port=$2
    case "$kind" in
    scrolloff)
        "${IN[@]}" "${SRV[@]}" "$BIN" start --listen "127.0.0.1:$port" --listen "[::1]:$port" --upstream "[::1]:$UP_PORT" \
            --state-dir "$WORK/state-$port" --control-socket "$WORK/control-$port.sock" ${SCROLLOFF_ARGS:-} >/dev/null 2>"$WORK/scrolloff.err" &
        SERVER_PID=$!; PIDS+=("$SERVER_PID")
        wait_answering "$port"
        "$CLI" block blocked.test --socket "$WORK/control-$port.sock" >/dev/null
        ;;
    unbound)
        cat >"$WORK/unbound-$port.conf" <<EOF
server:
    interface: 127.0.0.1
    interface: ::1
    port: $port
    num-threads: 1
    do-daemonize: no
    username: ""
    chroot: ""
    directory: "$WORK"
    pidfile: ""
    use-syslog: no
    logfile: ""
    verbosity: 0
    do-not-query-localhost: no
    module-config: "iterator"
    access-control: ::1 allow
    access-control: fd7c::/16 allow
    local-zone: "test." nodefault
    local-zone: "blocked.test." always_null
forward-zone:
    name: "."
    forward-addr: ::1@$UP_PORT
EOF
        "${IN[@]}" "${SRV[@]}" unbound -d -c "$WORK/unbound-$port.conf" 2>"$WORK/unbound.err" &
        SERVER_PID=$!; PIDS+=("$SERVER_PID")
        wait_answering "$port"
        ;;
    dnsmasq)
        "${IN[@]}" "${SRV[@]}" dnsmasq --no-daemon --conf-file=/dev/null --port="$port" --listen-address=127.0.0.1 --listen-address=::1 \
            --bind-interfaces --no-resolv --no-hosts --server="::1#$UP_PORT" --address=/blocked.test/0.0.0.0 \
            --cache-size=10000 --pid-file= 2>/dev/null &
        SERVER_PID=$!; PIDS+=("$SERVER_PID")
        wait_answering "$port"
        ;;
    esac
}

# Every thread of the server at the script's nice. A helper's threads do not inherit it: libdispatch
# gives its worker threads a nice of their own (0 for the default QoS, -4 for overcommit), and the
# event loops, started from one of them, run at 0; under `nice -n -15 bench/tcpslow.sh` beside
# builds at nice 10 the event loop then waited for the CPU while the builds ran.
same_nice() { local n t; n=$(nice); for t in /proc/"$1"/task/*; do renice -n "$n" -p "${t##*/}" >/dev/null 2>&1 || true; done; }

# Connections the server holds from the slow readers' sources (everything but the two clients).
slow_connections() { run ss -Htn state established "( sport = :$1 )" | awk '$4 !~ /^(127\.0\.0\.2|\[fd7c:0:0:99::1\]):/' | wc -l; }

printf '%s, %s slow-reader sources × 32 connections, %s s; %s queries from each ordinary client\n' \
    "$(date -u +%FT%TZ)" "$(echo $V4_SOURCES $V6_SOURCES | wc -w)" "$FLOOD_SECONDS" "$QUERIES"
for kind in $SERVERS; do
    port=$(free_port)
    start_server "$kind" "$port"
    same_nice "$SERVER_PID"
    idle=$(run /usr/bin/python3 bench/tcpslow.py time "$port" 100 127.0.0.2)
    before=$(rss_kib "$SERVER_PID")
    "${IN[@]}" "${LOAD[@]}" /usr/bin/python3 bench/tcpslow.py flood "$port" "$FLOOD_SECONDS" $V4_SOURCES $V6_SOURCES >"$WORK/flood.out" 2>&1 &
    flood=$!
    PIDS+=("$flood")
    for _ in $(seq 1 200); do grep -q FLOODING "$WORK/flood.out" && break; sleep 0.05; done
    sleep 1
    TRACE=${TRACE_DIR:+$TRACE_DIR/$kind-v4.txt} "${IN[@]}" "${LOAD[@]}" /usr/bin/python3 bench/tcpslow.py time "$port" "$QUERIES" 127.0.0.2 >"$WORK/v4.out" &
    v4=$!; PIDS+=("$v4")
    TRACE=${TRACE_DIR:+$TRACE_DIR/$kind-v6.txt} "${IN[@]}" "${LOAD[@]}" /usr/bin/python3 bench/tcpslow.py time "$port" "$QUERIES" "$V6_CLIENT" >"$WORK/v6.out" &
    v6=$!; PIDS+=("$v6")
    peak=0 held=0
    while kill -0 "$flood" 2>/dev/null; do
        r=$(rss_kib "$SERVER_PID"); [ "$r" -gt "$peak" ] && peak=$r
        c=$(slow_connections "$port"); [ "$c" -gt "$held" ] && held=$c
        sleep 0.5
    done
    wait "$v4" "$v6" || true
    sleep 3
    after=$(rss_kib "$SERVER_PID")
    echo "== $kind"
    echo "   idle, 100 queries:        $idle"
    echo "   during, 127.0.0.2:        $(cat "$WORK/v4.out")"
    echo "   during, $V6_CLIENT: $(cat "$WORK/v6.out")"
    echo "   $(tail -1 "$WORK/flood.out"); at most $held held at once"
    echo "   RSS KiB: before $before, peak during $peak, 3 s after $after"
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
done
