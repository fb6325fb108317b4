#!/usr/bin/env bash
# Runs the libFuzzer targets for a number of seconds each: `scripts/fuzz.sh 300`, or only some of
# them: `scripts/fuzz.sh 300 ControlAPIFuzz`. With FUZZ_RUNS=N each runs N inputs instead, however
# long that takes (the 10 M-run target: `make fuzz FUZZ_RUNS=10000000`).
# - DNSWireFuzz: every input through the DNS codec and, as a byte stream, through the
#   TCP framer.
# - ControlAPIFuzz: every input as the body of an endpoint of the route table, decoded
#   as the helper decodes it, and as text through the query, path and form parsers.
# Exits non-zero if libFuzzer finds a crash, leak or timeout; the input is saved under
# fuzz-corpus/TARGET/artifacts/ and should become a named test (Tests/DNSWireTests/,
# Tests/ControlAPITests/).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-300}"
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(DNSWireFuzz ControlAPIFuzz)
runs="${FUZZ_RUNS:-}"
swift="${SWIFT:-swift}"
max_len="${FUZZ_MAX_LEN:-4096}"

# What each target needs: its seeds, its dictionary, and an object of the module under test to
# check for instrumentation.
seeds_of() { case "$1" in DNSWireFuzz) echo Tests/DNSWireTests/corpus ;; ControlAPIFuzz) echo Tests/ControlAPITests/corpus ;; esac; }
dict_of() { case "$1" in DNSWireFuzz) echo Tests/DNSWireTests/fuzz.dict ;; ControlAPIFuzz) echo Tests/ControlAPITests/fuzz.dict ;; esac; }
object_of() { case "$1" in DNSWireFuzz) echo DNSWire.build/Parser.swift.o ;; ControlAPIFuzz) echo ControlAPI.build/WireBounds.swift.o ;; esac; }

# A separate scratch path: sanitizer flags apply to every module built, so this build must never
# share objects with the normal one.
mkdir -p .build-fuzz
for target in "${targets[@]}"; do
    [[ -n "$(seeds_of "$target")" ]] || { echo "fuzz: no target $target (DNSWireFuzz, ControlAPIFuzz)" >&2; exit 2; }
    log=.build-fuzz/fuzz-build-$target.log
    status=0
    # Why not `--sanitize=fuzzer --sanitize=address`: SwiftPM passes them as two `-sanitize=` flags in
    # no fixed order and swiftc keeps only the last, so a build gets either coverage or ASan, not both.
    # `--sanitize=fuzzer` makes SwiftPM link libFuzzer's main; the combined flag instruments for both.
    # The two defines drop the targets' replay `main`s (libFuzzer supplies one).
    "$swift" build --product "$target" -c debug --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address \
        --scratch-path .build-fuzz -Xswiftc -DDNSWIRE_LIBFUZZER -Xswiftc -DSCROLLOFF_LIBFUZZER >"$log" 2>&1 || status=$?
    # A build without coverage fuzzes blind ("no interesting inputs"), one without ASan misses memory
    # errors in the unsafe-pointer writer; refuse to run either.
    object="$(ls .build-fuzz/*/debug/"$(object_of "$target")" 2>/dev/null | head -n 1 || true)"
    sections="$(objdump -h "$object" 2>/dev/null || true)"
    symbols="$(nm "$object" 2>/dev/null || true)"
    if [[ $status -eq 0 && ( "$sections" != *sancov* || "$symbols" != *__asan_* ) ]]; then
        echo "fuzz: $target was built without coverage or ASan instrumentation; check the sanitizer flags" >&2
        exit 1
    fi
    # ld.gold warns about every ASan symbol it cannot export; the lines carry no information.
    grep -v "Cannot export local symbol" "$log" | tail -n 20
    if [[ $status -ne 0 ]]; then
        echo "fuzz: the $target build failed (exit $status); full log in $log" >&2
        exit 1
    fi
done
bin="$("$swift" build -c debug --scratch-path .build-fuzz --show-bin-path)"

for target in "${targets[@]}"; do
    # DNSWireFuzz keeps the folder it always had, so a saved corpus goes on growing.
    work="fuzz-corpus"
    [[ "$target" == DNSWireFuzz ]] || work="fuzz-corpus/$target"
    mkdir -p "$work/corpus" "$work/artifacts"
    if [[ -n "$runs" ]]; then
        limit=(-runs="$runs")
        done_words="$runs runs"
    else
        limit=(-max_total_time="$seconds")
        done_words="${seconds}s"
    fi
    # libFuzzer writes new interesting inputs into the first directory only; seeds stay untouched.
    SWIFT_BACKTRACE=enable=no "$bin/$target" "$work/corpus" "$(seeds_of "$target")" \
        "${limit[@]}" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -dict="$(dict_of "$target")" \
        -artifact_prefix="$work/artifacts/" -print_final_stats=1
    echo "fuzz: $target: $done_words without a crash (corpus: $work/corpus)"
done
