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
