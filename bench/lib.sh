# Shared by the bench scripts (bash): a work folder under /tmp that goes on exit together with
# every process whose pid the script adds to PIDS, and a free loopback port.
# Usage, from the checkout's root: . bench/lib.sh NAME    (the folder is /tmp/scrolloff-NAME.XXXXXX)
WORK=$(mktemp -d "/tmp/scrolloff-$1.XXXXXX")
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The helpers' benches (custom.sh, propagation.sh) share these.
answers() { dig @127.0.0.1 -p "$1" +time=1 +tries=1 +short "$2" A 2>/dev/null | grep -q "$3"; }
wait_answering() { # port name expected seconds
    local end=$(( $(date +%s) + ${4:-60} ))
    while [ "$(date +%s)" -lt "$end" ]; do answers "$1" "$2" "$3" && return 0; sleep 0.05; done
    echo "port $1 never answered $2 with $3; the helpers' errors: $(tail -5 "$WORK"/*.err 2>/dev/null)" >&2; exit 1
}

# An upstream on UP_PORT: every name under cache.bench is 10.0.0.1.
start_cache_upstream() {
    UP_PORT=$(free_port)
    dnsmasq --no-daemon --conf-file=/dev/null --port="$UP_PORT" --listen-address=127.0.0.1 --bind-interfaces \
        --no-resolv --no-hosts --local-ttl=3600 --address=/cache.bench/10.0.0.1 --pid-file= 2>/dev/null &
    PIDS+=($!)
    wait_answering "$UP_PORT" x.cache.bench 10.0.0.1
}

# A list of $1 names in $WORK/blocklist.txt (FIRST: its first name), served by URL on HTTP_PORT as
# people add lists.
serve_bench_list() {
    /usr/bin/python3 - "$1" "$WORK/blocklist.txt" <<'PY'
import random, sys
n, path = int(sys.argv[1]), sys.argv[2]
rng = random.Random(42)
words = ["feed", "reel", "clip", "snap", "tok", "gram", "vid", "scroll", "story", "live"]
with open(path, "w") as f:
    f.write("\n".join(f"{rng.choice(words)}{i}.s{i % 9973}.{rng.choice(words)}-bench.com" for i in range(n)) + "\n")
PY
    FIRST=$(head -1 "$WORK/blocklist.txt")
    HTTP_PORT=$(free_port)
    /usr/bin/python3 -m http.server --bind 127.0.0.1 --directory "$WORK" "$HTTP_PORT" >/dev/null 2>&1 &
    PIDS+=($!)
    for _ in $(seq 1 500); do curl -fsS "http://127.0.0.1:$HTTP_PORT/" >/dev/null 2>&1 && break; sleep 0.01; done
}
