#!/bin/sh
# Micro-benchmark of the hot-path decision (EnforcementSnapshot.decide): 3 profiles x 50 entries
# x 2,000 entry sets. Builds in release mode and prints ns per decision and allocations per call.
#
# Allocation counting method: bench/alloc_count.c is compiled into a shared object and loaded with
# LD_PRELOAD; it counts every call to malloc/calloc/realloc/posix_memalign/aligned_alloc/memalign
# (Swift's runtime allocates through these) and forwards to glibc. The benchmark reads the counter
# right before and after the timed loop, so the figure is exact for the loop, not an estimate.
#
# Usage: bench/decision.sh [decisions]   (default 20,000,000)
set -eu
cd "$(dirname "$0")/.."
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! swift build -c release --product scrolloff-bench >"$log" 2>&1; then
    cat "$log" >&2
    echo "decision.sh: the release build failed (output above); fix it and run again." >&2
    exit 1
fi
bin="$(swift build -c release --show-bin-path)"
cc -O2 -shared -fPIC -o "$bin/alloc_count.so" bench/alloc_count.c
LD_PRELOAD="$bin/alloc_count.so" "$bin/scrolloff-bench" decision "$@"
