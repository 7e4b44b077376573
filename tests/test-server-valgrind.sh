#!/bin/bash
# test-server-valgrind.sh -- the locked modes under valgrind's memcheck:
# 4 kill_it clients, then SIGTERM; valgrind must report no error and no
# byte still allocated at exit (every deleted entry freed, the store torn
# down). Skipped, and said so, when valgrind is not installed. Servers are
# started on port 0 and stopped by PID (tests/lib/server.sh).
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
source tests/lib/server.sh       # srv_start/srv_stop; BIN (default bin)
tmp=$(mktemp -d /tmp/ssnvg.XXXXXX)
remove_tmp() { rm -rf "$tmp"; }
srv_on_exit remove_tmp

for mode in serial coarse fine buffered; do
    if ! srv_start "$tmp/out" "$tmp/err" 10 valgrind --error-exitcode=9 \
            --leak-check=full --log-file="$tmp/vg" "$BIN/ssnserver-$mode" -p 0; then
        bad "$mode: server under valgrind did not start"
        continue
    fi
    # SIGTERM right after the clients' QUITs, their session threads still
    # lingering or exiting: the stop joins every one (threads.c,
    # threads_reap), so none of their memory is in use at exit.
    timeout 60 "$BIN/kill_it" -q 127.0.0.1 "$SRV_PORT" 300 4 >"$tmp/kill" 2>&1
    krc=$?
    srv_stop "$SRV_PID" TERM 10
    rc=$SRV_RC
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
