#!/usr/bin/env bash
# Runs the DNSWire libFuzzer target for a number of seconds (issue 3): `scripts/fuzz.sh 300`.
# With FUZZ_RUNS=N it runs N inputs instead, however long that takes (the 10 M-run target:
# `make fuzz FUZZ_RUNS=10000000`). Every input goes through the DNS codec and, as a byte stream,
# through the TCP framer (issue 11).
# Exits non-zero if libFuzzer finds a crash, leak or timeout; the input is saved under
# fuzz-corpus/artifacts/ and should become a named test in Tests/DNSWireTests/.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-300}"
runs="${FUZZ_RUNS:-}"
swift="${SWIFT:-swift}"
max_len="${FUZZ_MAX_LEN:-4096}"
work="fuzz-corpus"
seeds="Tests/DNSWireTests/corpus"
dictionary="Tests/DNSWireTests/fuzz.dict"

# A separate scratch path: sanitizer flags apply to every module built, so this build must never
# share objects with the normal one.
mkdir -p .build-fuzz
log=.build-fuzz/fuzz-build.log
status=0
# Why not `--sanitize=fuzzer --sanitize=address`: SwiftPM passes them as two `-sanitize=` flags in
# no fixed order and swiftc keeps only the last, so a build gets either coverage or ASan, not both.
# `--sanitize=fuzzer` makes SwiftPM link libFuzzer's main; the combined flag instruments for both.
"$swift" build --product DNSWireFuzz -c debug --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address \
    --scratch-path .build-fuzz -Xswiftc -DDNSWIRE_LIBFUZZER >"$log" 2>&1 || status=$?
# A build without coverage fuzzes blind ("no interesting inputs"), one without ASan misses memory
# errors in the unsafe-pointer writer; refuse to run either.
object="$(ls .build-fuzz/*/debug/DNSWire.build/Parser.swift.o 2>/dev/null | head -n 1 || true)"
sections="$(objdump -h "$object" 2>/dev/null || true)"
symbols="$(nm "$object" 2>/dev/null || true)"
if [[ $status -eq 0 && ( "$sections" != *sancov* || "$symbols" != *__asan_* ) ]]; then
    echo "fuzz: DNSWire was built without coverage or ASan instrumentation; check the sanitizer flags" >&2
    exit 1
fi
# ld.gold warns about every ASan symbol it cannot export; the lines carry no information.
grep -v "Cannot export local symbol" "$log" | tail -n 20
if [[ $status -ne 0 ]]; then
    echo "fuzz: the fuzz build failed (exit $status); full log in $log" >&2
    exit 1
fi
binary="$("$swift" build -c debug --scratch-path .build-fuzz --show-bin-path)/DNSWireFuzz"

mkdir -p "$work/corpus" "$work/artifacts"
if [[ -n "$runs" ]]; then
    limit=(-runs="$runs")
    done_words="$runs runs"
else
    limit=(-max_total_time="$seconds")
    done_words="${seconds}s"
fi
# libFuzzer writes new interesting inputs into the first directory only; seeds stay untouched.
SWIFT_BACKTRACE=enable=no "$binary" "$work/corpus" "$seeds" \
    "${limit[@]}" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -dict="$dictionary" \
    -artifact_prefix="$work/artifacts/" -print_final_stats=1
echo "fuzz: $done_words without a crash (corpus: $work/corpus)"
