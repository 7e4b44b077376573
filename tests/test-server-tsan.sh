#!/bin/bash
# test-server-tsan.sh -- the event driver with a journal (test-journal-
# events.sh: replies waiting for durability, a worker answering during a
# round, COMPACT waited for without blocking) and the thread driver's held
# replies and failed rounds (test-journal-faults.sh, test-journal.sh)
# against the ThreadSanitizer build of the servers (make tsan): any report
# on a server's stderr, a data race or a lock-order inversion among the
# store lock, the journal's lock and the workers' event bases, fails it
# (tests/lib/common.sh, finish).
# Then test-server-guard.sh's attacks (SANITIZED=1: no RSS bounds) and
# test-metrics.sh (its /metrics guesses). The clients are the plain
# build's.
set -u
cd "$(dirname "$0")/.."
make -s tsan >/dev/null || { echo "not ok - make tsan"; echo "0 passed, 1 failed"; exit 1; }
dir=build/tsan/bin-with-clients
mkdir -p "$dir"
for f in bin/*; do
    [[ -f $f && -x $f ]] && ln -sf "$PWD/$f" "$dir/"
done
for f in bin/tsan/*; do
    ln -sf "$PWD/$f" "$dir/"
done
SEAMS_BIN=build/tsan/seams BIN=$dir bash tests/test-journal-events.sh
rc=$?
# A thread per connection with a journal: replies held by the journal and
# sent by the round's thread (journal_reply.c), and failed rounds.
SEAMS_BIN=build/tsan/seams BIN=$dir bash tests/test-journal-faults.sh || rc=1
# The same under load, kill -9 and a full disk (test-journal.sh): its
# disk-full case showed a held reply's holder freed while the round's
# thread still read it, in one run of four before journal_reply.c's fix.
SEAMS_BIN=build/tsan/seams BIN=$dir bash tests/test-journal.sh || rc=1
# The guards against exhaustion (drops from other threads, AUTH's delay,
# admission after AUTH), under the same eyes.
SANITIZED=1 BIN=$dir bash tests/test-server-guard.sh || rc=1
# The metrics thread: scrapes beside the workers, and wrong passwords
# there charged to the addresses AUTH's threads read (auth_source.c).
SANITIZED=1 BIN=$dir bash tests/test-metrics.sh || rc=1
exit $rc
