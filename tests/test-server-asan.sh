#!/bin/bash
# test-server-asan.sh -- the concurrency tests (in both I/O models) and the
# guards against exhaustion (test-server-guard.sh, SANITIZED=1) again,
# against the AddressSanitizer + UBSan build of every mode (make asan): any sanitizer
# report on a server's stderr fails them (tests/lib/common.sh, finish).
set -u
cd "$(dirname "$0")/.."
make -s asan >/dev/null || { echo "not ok - make asan"; echo "0 passed, 1 failed"; exit 1; }
BIN=bin/asan bash tests/test-server-concurrency.sh
rc=$?
echo "# --- test-server-concurrency.sh with --io events under ASan"
SSN_IO=events BIN=bin/asan bash tests/test-server-concurrency.sh || rc=1
# The guards against exhaustion: drops, AUTH's delay, admission after AUTH.
SANITIZED=1 BIN=bin/asan bash tests/test-server-guard.sh || rc=1
exit $rc
