#!/bin/bash
# test-journal-soak.sh -- a short run of tools/soak-journal: 10 cycles of
# kill -9 at a random moment while four clients pipeline ADDs and DELETEs,
# compactions run (automatic, with a small --journal-compact-min, and
# COMPACT) and the test seam fails a random allocation; after each
# restart, without --journal-truncate, every acknowledged mutation must
# be there. fine and buffered, --io threads and events, --fsync always.
# About 20 s; make soak-journal runs 200 cycles.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

# A seed of its own each run, printed, so that a failure can be replayed
# (tools/soak-journal --seed S).
seed=$(( $(date +%s) % 32768 ))
out=$TEST_TMP/soak.out
BIN=$BIN SEAMS_BIN=$SEAMS_BIN tools/soak-journal --cycles 10 --seed "$seed" \
    --run-ms 200-700 --dir "$TEST_TMP/soak" >"$out" 2>&1
rc=$?
if ((rc == 0)); then
    ok "soak, seed $seed: $(tail -n 1 "$out" | sed 's/^soak-journal: //')"
else
    not_ok "soak, seed $seed: every restart holds every acknowledged mutation (exit $rc)"
    grep -v '^cycle' "$out" | grep -v 'Killed' | head -n 15 | sed 's/^/#   /'
fi
expect_eq "soak: ten cycles ran, and the final check" \
    "$(grep -c '^cycle [0-9]*/10: ' "$out")" 10
finish
