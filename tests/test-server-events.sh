#!/bin/bash
# test-server-events.sh -- the protocol contract and the concurrency checks
# again, against every lock mode with --io events (the event-driven driver);
# test-server-asan.sh (make check-extra) runs the concurrency checks with
# --io events under AddressSanitizer. The suites are the ones
# the thread-per-connection driver runs; tests/lib/common.sh's start_server
# adds --io "$SSN_IO". The lifecycle and limits suites pass against it too
# (run them with SSN_IO=events); they stay out of make check for its time.
set -u
cd "$(dirname "$0")/.." || exit 1
export SSN_IO=events
rc=0
for suite in protocol concurrency; do
    echo "# --- test-server-$suite.sh with --io events"
    bash "tests/test-server-$suite.sh" || rc=1
done
# An idle connection's session is parked (server/session_park.c): these
# end one without a byte read first (coarse's lock goes on to the next).
echo "# --- test-server-limits.sh's idle cases with --io events"
bash tests/test-server-limits.sh case_idle_timeout case_coarse_idle \
    case_many_idle || rc=1
exit $rc
