#!/bin/sh
# Builds the list-load benchmark in release mode and prints the CPU time of each stage the helper
# runs when a list is added (`scrolloff lists add URL`): the validator's parse, the reuse of its
# rules by HelperEngine.parseLists, and the matcher build (setLists → MatcherTables.build), for a
# plain and a hosts-format copy of a bench/dns.sh-style list (the brief's target: 1,000,000 names in force
# <= 1.5 s after the list is added). CPU time is the process's, so the shared VM's waits are left out.
# Usage: bench/listload.sh [name-count] [rounds]        e.g. bench/listload.sh 1000000 3
#   BEFORE=file: a previous run's output; its RESULT lines are printed beside this run's as ratios.
set -eu
cd "$(dirname "$0")/.."
swift build -c release --product scrolloff-bench >&2
bin=$(swift build -c release --show-bin-path)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin/scrolloff-bench" listload "$@" | tee "$out"
if [ -n "${BEFORE:-}" ]; then
    echo "ratio after/before (CPU ms):"
    grep '^RESULT' "$BEFORE" | while read -r _ variant rest; do
        now=$(grep "^RESULT $variant " "$out" || true)
        [ -n "$now" ] || continue
        for pair in $rest; do
            key=${pair%%=*}; before=${pair#*=}
            after=$(printf '%s\n' "$now" | tr ' ' '\n' | awk -F= -v k="$key" '$1 == k {print $2}')
            awk -v v="$variant" -v k="$key" -v b="$before" -v a="$after" \
                'BEGIN { printf "  %-6s %-13s %6s -> %6s ms  (%s)\n", v, k, b, a, (b > 0 ? sprintf("%.2fx", a / b) : "-") }'
        done
    done
fi
