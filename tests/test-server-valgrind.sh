#!/bin/bash
# test-server-valgrind.sh -- the locked modes under valgrind's memcheck:
# 4 kill_it clients, then SIGTERM; valgrind must report no error and no
# byte still allocated at exit (every deleted entry freed, the store torn
# down). Skipped, and said so, when valgrind is not installed.
set -u
cd "$(dirname "$0")/.."
pass=0 fail=0
ok()  { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }

if ! command -v valgrind >/dev/null; then
    echo "# valgrind not installed: skipped (apt-get install -y valgrind)"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi
tmp=$(mktemp -d /tmp/ssnvg.XXXXXX)
pid=""
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

for mode in serial coarse fine buffered; do
    valgrind --error-exitcode=9 --leak-check=full --log-file="$tmp/vg" \
        "bin/ssnserver-$mode" -p 0 >"$tmp/out" 2>"$tmp/err" </dev/null &
    pid=$!
    port=""
    for _ in $(seq 100); do
        port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$tmp/out")
        [ -n "$port" ] && break
        sleep 0.1
    done
    if [ -z "$port" ]; then
        bad "$mode: server under valgrind did not start"
        kill -KILL "$pid"; wait "$pid"; pid=""
        continue
    fi
    timeout 60 bin/kill_it -q 127.0.0.1 "$port" 300 4 >"$tmp/kill" 2>&1
    krc=$?
    kill -TERM "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid"; rc=$?; pid=""
    [ "$krc" -eq 0 ] && ok "$mode: kill_it verified under valgrind" \
                     || bad "$mode: kill_it: $(tail -n 1 "$tmp/kill")"
    [ "$rc" -eq 0 ] && ok "$mode: exit status 0 after SIGTERM, no valgrind error" \
                    || bad "$mode: exit status $rc ($(grep -m1 'ERROR SUMMARY' "$tmp/vg"))"
    grep -qE 'in use at exit: 0 bytes in 0 blocks|All heap blocks were freed' "$tmp/vg" \
        && ok "$mode: nothing allocated at exit" \
        || bad "$mode: $(grep -m1 'in use at exit' "$tmp/vg")"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
