#!/bin/bash
# test-races.sh -- the race-condition lab in make check: with a wide race
# window the nolock server fails in at least one of three short kill_it runs,
# every locked mode verifies in several runs with the same window, and the
# ThreadSanitizer build of the fine server serves a multi-client load with no
# report. Servers listen on loopback ports of their own, stopped by PID.
set -u
cd "$(dirname "$0")/.."
pass=0 fail=0
ok()  { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }

LAB="tools/race-lab repeat --clients 4 --events 300 --window 500 --hang 5"

out=$($LAB --modes nolock --runs 3 2>/dev/null)
echo "$out" | sed 's/^/# /'
row=$(echo "$out" | awk '$1 == "nolock"')
failed=$(echo "$row" | awk '{print $4}')
[ "${failed:-0}" -ge 1 ] && ok "nolock fails in $failed of 3 runs with --race-window 500" \
                         || bad "nolock never failed in 3 runs: $row"

out=$($LAB --modes "serial coarse fine buffered" --runs 3 2>&1)
echo "$out" | sed 's/^/# /'
for mode in serial coarse fine buffered; do
    row=$(echo "$out" | awk -v m="$mode" '$1 == m')
    verified=$(echo "$row" | awk '{print $3}')
    [ "${verified:-0}" -eq 3 ] && ok "$mode verifies 3 of 3 runs with the same window" \
                               || bad "$mode: $row"
done

if make -s tsan >/dev/null 2>&1; then
    out=$(tools/race-lab tsan --modes fine --clients 4 --events 200 --window 0 2>&1)
    echo "$out" | sed 's/^/# /'
    row=$(echo "$out" | awk '$1 == "fine"')
    echo "$row" | grep -q '^fine  *no .*verified' && ok "TSan fine build: no report, verified" \
                                                 || bad "TSan fine build: $row"
else
    bad "make tsan failed"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
