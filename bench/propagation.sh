#!/usr/bin/env bash
# How long a change made through one helper takes to reach the other helper's DNS answers, two
# helpers on one PostgreSQL (the goal: "≤ 1 s at the 99th percentile with 10 profiles and a
# 1,000,000-name list blocked").
#
# Two release helpers (`scrolloff-dns start --config` with `[store] backend = "postgresql"`, nodes
# a and b, each with its own state folder, control socket and DNS port) on one database of a
# PostgreSQL started in a temporary folder (bench/pg.sh). A synthetic list of NAMES names served by
# URL is named in both helpers' files (`[[lists.source]]`; each fetches its own copy); through A's
# CLI, 9 profiles besides the default, and the list blocked in all 10. Then CHANGES changes of each kind through A's CLI, and
# for each the time until B answers the new way (a poller asks B every 2 ms):
#   pause   `scrolloff pause --profile default 10m`, then `resume`: every name but the allow
#           lists flips on B (a forwarded name answers 0.0.0.0, then its address again). The
#           rules change; the names the matcher holds do not.
#   domain  `scrolloff block bench-N.example`: a new custom domain, so both helpers build a new
#           matcher, the 1,000,000 names included.
# Each is timed from the moment the CLI is started (the change as a person makes it: the CLI's
# own start, A's commit) and from the CLI's return (A has committed and answers so itself).
#
# Usage: bench/propagation.sh [CHANGES]    NAMES=1000000 PROFILES=10 KINDS="pause domain"
#   SCROLLOFF_BIN=… SCROLLOFF_CLI=… measure other binaries (no build).
# Needs: root, postgresql (scripts/install-deps.sh --test), dnsmasq, python3-dnspython, a release build.
set -euo pipefail

CHANGES=${1:-25}
NAMES=${NAMES:-1000000}
PROFILES=${PROFILES:-10}
KINDS=${KINDS:-"pause domain"}

cd "$(dirname "$0")/.."
for tool in dnsmasq dig; do
    command -v "$tool" >/dev/null || { echo "bench/propagation.sh: $tool is missing; run scripts/install-deps.sh" >&2; exit 1; }
done
if [ -z "${SCROLLOFF_BIN:-}" ]; then make --no-print-directory release >/dev/null; fi
BIN=${SCROLLOFF_BIN:-"$(swift build -c release --show-bin-path)/scrolloff-dns"}
CLI=${SCROLLOFF_CLI:-"$(swift build -c release --show-bin-path)/scrolloff"}
export SCROLLOFF_CATALOG=${SCROLLOFF_CATALOG:-"$PWD/blocklists"}
. bench/lib.sh propagation
. bench/pg.sh
pg_start
pg_createdb household

start_cache_upstream
serve_bench_list "$NAMES"

declare -A PORT SOCK
for node in a b; do
    PORT[$node]=$(free_port)
    SOCK[$node]="$WORK/$node.sock"
    # The list is named in both helpers' files: a file's `[[lists.source]]` entries are its
    # helper's own (docs/operations.md), and each helper fetches its own copy.
    config=$(pg_config household "$node")
    printf '\n[[lists.source]]\nname = "bench"\nurl = "http://127.0.0.1:%s/blocklist.txt"\n' "$HTTP_PORT" >>"$config"
    "$BIN" start --config "$config" --listen "127.0.0.1:${PORT[$node]}" --upstream "127.0.0.1:$UP_PORT" \
        --state-dir "$WORK/state-$node" --control-socket "${SOCK[$node]}" >/dev/null 2>"$WORK/$node.err" &
    PIDS+=($!)
done
for node in a b; do wait_answering "${PORT[$node]}" x.cache.bench 10.0.0.1; done

A=(--socket "${SOCK[a]}")
for i in $(seq 1 $(( PROFILES - 1 ))); do "$CLI" profile add "p$i" --clients "10.$i.0.0/16" "${A[@]}" >/dev/null; done
started=$(date +%s%3N)
for p in default $(seq -f 'p%g' 1 $(( PROFILES - 1 ))); do "$CLI" block bench --profile "$p" "${A[@]}" >/dev/null; done
for node in a b; do wait_answering "${PORT[$node]}" "$FIRST" 0.0.0.0 120; done
echo "two helpers on one PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}'): $PROFILES profiles, $NAMES names blocked in each;" \
     "the list in force on both $(( $(date +%s%3N) - started )) ms after the first \`block bench\`; $(nproc --all) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

# One poller in Python for all the changes: it starts A's CLI, then asks B every 2 ms.
/usr/bin/python3 - "$CLI" "${SOCK[a]}" "${PORT[b]}" "$CHANGES" "$KINDS" <<'PY' || { tail -n 15 "$WORK"/a.err "$WORK"/b.err >&2; exit 1; }
import statistics, subprocess, sys, time
import dns.message, dns.query
cli, sock, port, changes, kinds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5].split()

def answer(name):
    try:
        reply = dns.query.udp(dns.message.make_query(name, "A"), "127.0.0.1", port=port, timeout=1)
        return " ".join(rr.to_text() for rrset in reply.answer for rr in rrset)
    except Exception:
        return ""

def change(args, name, want):
    """Runs A's CLI; the time (ms) from its start and from its return until B answers `want`."""
    t0 = time.monotonic()
    subprocess.run([cli] + args + ["--socket", sock], check=True, stdout=subprocess.DEVNULL)
    t1 = time.monotonic()
    deadline = t1 + 30
    while want not in answer(name):
        if time.monotonic() > deadline:
            sys.exit(f"B never answered {name} with {want} after {' '.join(args)}")
        time.sleep(0.002)
    t2 = time.monotonic()
    return (t2 - t0) * 1000, (t2 - t1) * 1000

def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]

for kind in kinds:
    from_start, from_commit = [], []
    for i in range(changes):
        if kind == "pause":
            samples = [change(["pause", "--profile", "default", "10m"], f"c{i}.cache.bench", "0.0.0.0"),
                       change(["resume", "--profile", "default"], f"c{i}.cache.bench", "10.0.0.1")]
        else:
            samples = [change(["block", f"bench-{i}.example"], f"bench-{i}.example", "0.0.0.0")]
        for s, c in samples:
            from_start.append(s)
            from_commit.append(c)
    for label, v in (("from the CLI's start", from_start), ("from the CLI's return", from_commit)):
        print(f"{kind:7} {len(v):3} changes, {label:22}: p50 {pct(v, 50):6.0f} ms  p99 {pct(v, 99):6.0f} ms  max {max(v):6.0f} ms"
              f"  mean {statistics.mean(v):6.0f} ms")
PY
