#!/bin/bash
# test-server-asan.sh -- the concurrency tests and the guards against
# exhaustion (test-server-guard.sh, SANITIZED=1) again, against the
# AddressSanitizer + UBSan build of every mode (make asan): any sanitizer
# report on a server's stderr fails them (tests/lib/common.sh, finish).
set -u
cd "$(dirname "$0")/.."
make -s asan >/dev/null || { echo "not ok - make asan"; echo "0 passed, 1 failed"; exit 1; }
BIN=bin/asan bash tests/test-server-concurrency.sh
rc=$?
# The guards against exhaustion: drops, AUTH's delay, admission after AUTH.
SANITIZED=1 BIN=bin/asan bash tests/test-server-guard.sh || rc=1
exit $rc
