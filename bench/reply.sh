#!/usr/bin/env bash
# Full-reply benchmark: query bytes in, reply bytes out, through the helper's engine
# (a NAMES-name list added and blocked, plus instagram), its published policy and the server's
# resolver chain, on one event loop with no socket. Prints CPU time and allocations per reply for
# the blocked and the cache-hit path, with and without the copy the UDP listener makes into its sendmmsg batch.
# A dnsmasq started here is the upstream that fills the cache. Allocations are counted by
# bench/alloc_count.c (LD_PRELOAD), read right before and after each timed loop.
#
# Usage: bench/reply.sh [NAMES] [REPLIES]     (defaults 200000, 2000000)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v dnsmasq >/dev/null || { echo "bench/reply.sh: dnsmasq is missing (apt-get install dnsmasq-base)" >&2; exit 1; }
log="$(mktemp)"
pid=""
trap 'rm -f "$log"; [ -n "$pid" ] && kill "$pid" 2>/dev/null; true' EXIT
# `make release` (it builds scrolloff-bench too), so this shares its build with bench/dns.sh.
if ! make --no-print-directory release >"$log" 2>&1; then
    cat "$log" >&2
    echo "reply.sh: the release build failed (output above)." >&2
    exit 1
fi
bin="$(swift build -c release --show-bin-path)"
cc -O2 -shared -fPIC -o "$bin/alloc_count.so" bench/alloc_count.c
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
dnsmasq --no-daemon --conf-file=/dev/null --port="$port" --listen-address=127.0.0.1 --bind-interfaces \
    --no-resolv --no-hosts --local-ttl=3600 --address=/cache.bench/10.0.0.1 --pid-file= 2>/dev/null &
pid=$!
sleep 0.3
SCROLLOFF_CATALOG="$PWD/blocklists" LD_PRELOAD="$bin/alloc_count.so" "$bin/scrolloff-bench" reply "$port" "${1:-200000}" "${2:-2000000}"
