#!/usr/bin/env bash
# Writes scripts/link-order/scrolloff-dns.txt, the order the release link places the helper's
# functions in (Package.swift): the functions that ran while the helper started and answered
# blocked, cached and forwarded names over UDP and TCP; then those that ran only once it answered
# the CLI, added a list by URL and served the household page; then those of its stop. Each phase
# is one callgrind dump, most instructions first within it (scripts/link-order.py). Placed
# together, the code a running helper touches fills a few MiB of pages instead of being spread
# over the whole 30 MB of code, and its resident memory is that much smaller (docs/benchmarks.md,
# "The baseline, cut at the link").
#
# Run it after large changes to start-up or serving code, then commit the file. A stale order still
# links and runs the same: names it no longer finds are skipped and new functions go where the
# linker puts them anyway; it only saves less. Needs valgrind (installed when missing, as root).
set -Eeuo pipefail
trap 'echo "link-order: failed at line $LINENO (LINK_ORDER_DEBUG=1 shows each step)" >&2' ERR
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
scripts/install-deps.sh --profile
for tool in valgrind callgrind_control dnsmasq dig curl objcopy nm objdump; do
    command -v "$tool" >/dev/null || { echo "link-order: $tool is missing; run scripts/install-deps.sh --profile as root" >&2; exit 1; }
done
# The toolchain's static libraries, whose functions share sections (scripts/link-order.py).
static_libs="$(dirname "$(readlink -f "$(command -v "$SWIFT")")")/../lib/swift_static/linux"
compgen -G "$static_libs/*.a" >/dev/null || { echo "link-order: no static libraries in $static_libs" >&2; exit 1; }
# SWIFT_FLAGS="--scratch-path DIR" profiles the build in another folder, as `make release` takes it.
make --no-print-directory release SWIFT="$SWIFT" SWIFT_FLAGS="${SWIFT_FLAGS:-}" >/dev/null
# shellcheck disable=SC2086
bin="$("$SWIFT" build ${SWIFT_FLAGS:-} -c release --show-bin-path)"
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
[ -n "${LINK_ORDER_DEBUG:-}" ] && set -x
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# valgrind 3.19 cannot read the toolchain's DWARF 5; the symbol table is all callgrind needs.
objcopy --strip-debug "$bin/scrolloff-dns" "$work/scrolloff-dns"
up=$(free_port); http=$(free_port); dns=$(free_port); web=$(free_port)
dnsmasq --no-daemon --port="$up" --listen-address=127.0.0.1 --bind-interfaces --no-resolv --no-hosts \
    --address=/#/10.0.0.1 --pid-file= >/dev/null 2>&1 &
pids+=($!)
mkdir "$work/www"
# A small list: profiled with 50,000 names and a hosts-format list beside it, the order kept 2 MiB
# more resident, at start and with a 200,000-name list alike (2026-11-25).
for i in $(seq 1 2000); do echo "host$i.listed.test"; done >"$work/www/list.txt"
/usr/bin/python3 -m http.server "$http" --bind 127.0.0.1 --directory "$work/www" >/dev/null 2>&1 &
pids+=($!)
sock="$work/control.sock"
valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/profile.%p" \
    "$work/scrolloff-dns" start --listen "127.0.0.1:$dns" --upstream "127.0.0.1:$up" --state-dir "$work/state" \
    --control-socket "$sock" --web-listen "127.0.0.1:$web" --catalog "$PWD/blocklists" >/dev/null 2>"$work/helper.log" &
helper=$!
pids+=("$helper")
# A query that gets no answer stops the run and says which (dig prints it on standard output).
q() { dig +time=5 +tries=2 -p "$dns" @127.0.0.1 "$@" >"$work/dig.out" || { cat "$work/dig.out" >&2; return 1; }; }
# Under callgrind the start takes seconds, not milliseconds.
for _ in $(seq 300); do
    dig +time=5 +tries=1 -p "$dns" @127.0.0.1 www.instagram.com >/dev/null 2>&1 && break
    kill -0 "$helper" 2>/dev/null || { echo "link-order: the helper exited:" >&2; tail -5 "$work/helper.log" >&2; exit 1; }
    sleep 0.2
done
cli() { "$bin/scrolloff" "$@" --socket "$sock" >/dev/null; }
for _ in 1 2 3; do
    q www.instagram.com; q example.org; q example.org AAAA; q +tcp example.net; q www.tiktok.com
done
# Phase 1 ends here: start-up and serving.
callgrind_control --dump=serving "$helper" >/dev/null
cli block instagram tiktok
q www.instagram.com; q +tcp www.tiktok.com
cli lists add "http://127.0.0.1:$http/list.txt" --name listed
cli block listed
for i in $(seq 1 20); do q "host$i.listed.test"; q "name$i.forwarded.test"; q +tcp "host$i.listed.test"; done
cli status
cli services
cli wallet
curl -sf "http://127.0.0.1:$web/" >/dev/null
for _ in $(seq 100); do q www.tiktok.com; q cached.test; q host1.listed.test AAAA; done
# Phase 2 ends here: what a person's commands, a list and the page add. Phase 3 is the stop.
callgrind_control --dump=managing "$helper" >/dev/null
kill -TERM "$helper"
wait "$helper" || { echo "link-order: the helper did not stop cleanly:" >&2; tail -5 "$work/helper.log" >&2; exit 1; }
# callgrind numbers the dumps: profile.PID.1, profile.PID.2, then profile.PID at exit.
# Into place only once whole: a failed run leaves the committed order as it was.
scripts/link-order.py "$bin/scrolloff-dns" "$static_libs" "$work/profile.$helper.1" "$work/profile.$helper.2" "$work/profile.$helper" \
    >"$work/order.txt"
mv "$work/order.txt" scripts/link-order/scrolloff-dns.txt
echo "scripts/link-order/scrolloff-dns.txt: $(wc -l <scripts/link-order/scrolloff-dns.txt) functions; \`make release\` links with it"
