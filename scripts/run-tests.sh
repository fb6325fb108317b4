#!/usr/bin/env bash
# Runs the built tests (`swift test --skip-build`), keeps the whole output in .build/test-output.log
# and, when a test fails, prints the failing tests and their recorded issues once more at the end.
# Why: CI shows only the last lines of a run, and in a 1,000-test run the failures scroll far above.
set -uo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
log=.build/test-output.log
mkdir -p .build
# shellcheck disable=SC2086
"$SWIFT" test --skip-build ${SWIFT_FLAGS:-} 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
    echo
    echo "== the tests that failed, again (whole output in $log) =="
    # Swift Testing marks a failed test and each recorded issue with ✘; XCTest says "error:".
    grep -E '✘ Test .*(failed|recorded an issue)|: error: ' "$log" | grep -v '✘ Test run with' | head -60
    grep -E '✘ Test run with' "$log" | tail -1
fi
exit "$status"
