#!/bin/sh
# How late a thread woken from another core runs while a low-priority neighbour on its core does
# different kinds of work (bench/wakeup_probe.c says which); SPEC §9.10, "a refresh never stalls
# answers". Needs 2 cores and gcc. Usage: bench/wakeup.sh
set -eu
cd "$(dirname "$0")"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
gcc -O2 -pthread -o "$out" wakeup_probe.c
echo "kernel $(uname -r); 2000 wake-ups 1 ms apart, reader on CPU 0, writer on CPU 1"
"$out" none idle
for class in idle nice10; do
    for work in spin touch churn; do "$out" "$work" "$class"; done
done
for kib in 65536 1024 256; do "$out" release idle "$kib"; done
