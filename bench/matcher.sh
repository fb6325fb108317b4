#!/bin/sh
# Builds the matcher benchmark in release mode and prints its figures against the targets of
# targets: 1,000,000 domains built in <= 1.5 s, <= 48 bytes per domain, lookup <= 300 ns, no
# allocation per lookup. Allocations are counted by bench/alloc_count.c, preloaded (see decision.sh).
# Usage: bench/matcher.sh [domain-count]
set -eu
cd "$(dirname "$0")/.."
swift build -c release --product scrolloff-bench >&2
bin=$(swift build -c release --show-bin-path)
cc -O2 -shared -fPIC -o "$bin/alloc_count.so" bench/alloc_count.c
LD_PRELOAD="$bin/alloc_count.so" "$bin/scrolloff-bench" matcher "$@"
