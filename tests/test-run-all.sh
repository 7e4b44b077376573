#!/bin/bash
# test-run-all.sh -- make check's own driver (tests/run-all) on scripts
# made up here: a failing script is counted and named, a script marked
# `# run-all: beside` runs in the side lane with its output shown after
# the main lane's, and an interrupt (SIGINT to run-all's process group,
# as Ctrl-C in a terminal sends it) stops both lanes, leaving nothing
# running. Its own scripts only sleep.
# run-all: beside
source "$(dirname "$0")/lib/common.sh"

d=$TEST_TMP/lanes
mkdir -p "$d"

# script NAME BESIDE BODY: a made-up script in $d.
script() {
    { echo '#!/bin/bash'
      [[ $2 == beside ]] && echo '# run-all: beside'
      echo "$3"; } >"$d/$1"
}

# ---- counting ---------------------------------------------------------

script pass.sh main 'echo main-lane-ran'
script fail.sh main 'exit 3'
script side.sh beside 'sleep 0.3; echo side-lane-ran'
out=$(tests/run-all - "$d/pass.sh" "$d/side.sh" "$d/fail.sh" 2>&1)
rc=$?
expect_eq "a failed script: run-all fails" "$rc" 1
expect_match "the count line" "$out" $'\n2 passed, 1 failed$'
expect_match "the failed one is named" "$out" $'\nfailed: fail.sh\n'
expect_match "the side lane's script ran, its output after the main lane's" \
    "$out" 'main-lane-ran.*=== fail\.sh: FAILED.*side-lane-ran'
expect_match "the side lane's script is counted" "$out" '=== side\.sh: ok'

# ---- an interrupt -----------------------------------------------------

# Each sleeps long with a sleep of its own (found by its argument), and
# says its PID once it runs.
tag=$$$RANDOM
script long-main.sh main "echo \$\$ >'$d/main.pid'; sleep 29.$tag"
script long-side.sh beside "echo \$\$ >'$d/side.pid'; sleep 28.$tag"
# A process group of its own, as a terminal's foreground job has (job
# control on: a background job of a script would ignore SIGINT).
set -m
tests/run-all - "$d/long-main.sh" "$d/long-side.sh" >"$d/int.out" 2>&1 &
runner=$!
set +m
stop_runner() { kill -KILL -- "-$runner" 2>/dev/null; }
srv_on_exit stop_runner         # this script stopped before it did
for ((i = 0; i < 100; i++)); do
    [[ -s $d/main.pid && -s $d/side.pid ]] && break
    sleep 0.1
done
check "both lanes started" test -s "$d/main.pid" -a -s "$d/side.pid"
kill -INT -- "-$runner" 2>/dev/null
for ((i = 0; i < 100; i++)); do
    kill -0 "$runner" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$runner" 2>/dev/null; then
    not_ok "run-all stops on an interrupt"
    kill -KILL -- "-$runner" 2>/dev/null
else
    ok "run-all stops on an interrupt"
fi
wait "$runner"
expect_eq "its status says it was interrupted" "$?" 130
sleep 0.2
left=$(pgrep -f "sleep 2[89]\.$tag")
expect_eq "nothing of either lane is left running" "$left" ""
[[ -n $left ]] && kill $left 2>/dev/null
finish
