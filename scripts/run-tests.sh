#!/usr/bin/env bash
# Runs the built tests (`swift test --skip-build`), keeps the whole output in .build/test-output.log
# and, when a test fails, prints the failing tests and their recorded issues once more at the end.
# Why: CI shows only the last lines of a run, and in a 1,000-test run the failures scroll far above.
set -uo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
log=.build/test-output.log
mkdir -p .build
# Processes: everything but the end-to-end targets, then those. Why: Swift's shared task pool has
# one thread per core (2 in CI), and the end-to-end tests wait on processes and sockets in place,
# so in one process they held both threads for minutes and unit tests with their own deadlines
# (gates, time limits) failed without ever having run.
# The end-to-end targets run as two processes at once. Why: EndToEndTests' tests are synchronous
# and wait on helper processes in place, so they hold the pool's threads for their whole length;
# ControlEndToEndTests run the helper inside the test process (HelperMain.run on that pool), and
# beside EndToEndTests its start waited for a free thread past 30 s (AllowanceReloadTests never got
# past "starting" in full runs, while it passed alone). In a process of its own it has its own pool.
# The shared-store suites come last and alone (one test at a time): they start PostgreSQL servers,
# stop, kill and cut them off, and time what the helpers notice to the second; beside the other
# end-to-end suites on 2 cores those deadlines measured the machine's queue, not the helpers.
# The live feed's timing test (urges within a second) goes with them, for the same reason, and so
# does the slow TCP readers' flood (another client's 30 questions each answered within 3 s while
# 192 connections pipeline, in three privilege modes): beside the other suites on a loaded 2-core
# run, 2 of 30 once waited past 3 s for the machine, not the helper.
e2e='^(EndToEndTests|ControlEndToEndTests)\.'
shared='^(SharedStoreTests\.|EndToEndTests\.SharedStoreEndToEndTests|EngineTests\.EventFeedTests|EndToEndTests\.TCPSlowReadersEndToEndTests)'
control_log=.build/test-output-control.log
: >"$log"
# shellcheck disable=SC2086
"$SWIFT" test --skip-build ${SWIFT_FLAGS:-} --skip "$e2e" --skip "$shared" 2>&1 | tee -a "$log"
status=${PIPESTATUS[0]}
# The second process is the test bundle itself (what `swift test` runs): two `swift test` at once
# both open the build folder's database, and the second one sometimes found it locked and ran
# no test at all.
# shellcheck disable=SC2086
bundle="$("$SWIFT" build ${SWIFT_FLAGS:-} --show-bin-path)/scrolloffPackageTests.xctest"
"$bundle" --testing-library swift-testing --filter '^ControlEndToEndTests\.' --skip "$shared" >"$control_log" 2>&1 &
control=$!
trap 'kill "$control" 2>/dev/null' EXIT
# shellcheck disable=SC2086
"$SWIFT" test --skip-build ${SWIFT_FLAGS:-} --filter '^EndToEndTests\.' --skip "$shared" 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
wait "$control" || status=1
trap - EXIT
tee -a "$log" <"$control_log"
# shellcheck disable=SC2086
"$SWIFT" test --skip-build ${SWIFT_FLAGS:-} --filter "$shared" --no-parallel 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
if [ "$status" -ne 0 ]; then
    echo
    echo "== the tests that failed, again (whole output in $log) =="
    # Swift Testing marks a failed test and each recorded issue with ✘; XCTest says "error:".
    grep -E '✘ Test .*(failed|recorded an issue)|: error: ' "$log" | grep -v '✘ Test run with' | head -60
    grep -E '✘ Test run with' "$log"
fi
exit "$status"
