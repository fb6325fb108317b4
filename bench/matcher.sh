#!/bin/sh
# Builds the matcher benchmark in release mode and prints its figures against the targets of
# issue 4: 1,000,000 domains built in <= 1.5 s, <= 48 bytes per domain, lookup <= 300 ns, no
# allocation per lookup. Allocations are counted by bench/malloc-count.c, preloaded.
# Usage: bench/matcher.sh [domain-count]
set -eu
cd "$(dirname "$0")/.."
swift build -c release --product matcher-bench >&2
bin=$(swift build -c release --show-bin-path)
cc -O2 -shared -fPIC -o "$bin/libmalloc-count.so" bench/malloc-count.c
LD_PRELOAD="$bin/libmalloc-count.so" "$bin/matcher-bench" "$@"
