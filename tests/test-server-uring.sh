#!/bin/bash
# test-server-uring.sh -- --io events' batched socket calls
# (server/net/econn_batch.c over server/net/uring.c). Under 50 connections
# with one request in flight each, the reads of a poll's connections and
# the sends of a round's replies go through the worker's io_uring in
# batches (STATS uring on, uring_enters above 0, more than 2 calls an
# enter on average, never more than 64; 3.05 to 33 seen, 2026-11-28) and
# every reply is right (the COUNT the replies add up to);
# --uring off makes each call alone (uring off, nothing counted) with the
# same replies. With --fsync everysec the replies held for the journal go
# together once the worker's commit has written them (econn_batch_held):
# the same check, and a restart replays what was acknowledged. --uring is
# refused with --io threads, and a bad value is named. check_uring.c
# tests the ring's results call by call.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

# Whether the kernel should give a ring (io_uring_disabled absent or 0).
KERNEL_URING=on
if [[ -r /proc/sys/kernel/io_uring_disabled &&
      $(</proc/sys/kernel/io_uring_disabled) != 0 ]]; then
    KERNEL_URING=unavailable
fi

# stat NAME FILE: NAME's value in the STATS reply saved in FILE.
stat() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }

# case_load WANT [ARGS]: a load on an events server started with ARGS;
# WANT is what STATS' uring line should say.
case_load() {
    local want=$1 out=$TEST_TMP/bench.out st=$TEST_TMP/stats.out
    shift
    local what="--io events ${*:-(default)}"
    what=${what//"$TEST_TMP/"/}
    start_server buffered --io events --workers 1 "$@" || return
    "$CLIENTS_BIN/ssn-bench" -p "$SRV_PORT" -c 50 -t 1 -n 20000 \
        --mix 1:8:1 --keys 2000 --preload 1000 >"$out" 2>&1
    local replies stored deleted
    replies=$(grep '^replies:' "$out")
    expect_match "$what: 20,000 requests on 50 connections, no error reply" \
        "$replies" ', error 0$'
    stored=$(sed -n 's/.*stored \([0-9]*\),.*/\1/p' <<<"$replies")
    deleted=$(sed -n 's/.*deleted \([0-9]*\),.*/\1/p' <<<"$replies")
    converse_str "$SRV_PORT" 'COUNT\nSTATS\nQUIT\n' "$st"
    expect_eq "$what: COUNT is the 1000 preloaded + stored - deleted" \
        "$(head -n 1 "$st")" "$((1000 + stored - deleted))"
    local calls enters
    calls=$(stat uring_calls "$st")
    enters=$(stat uring_enters "$st")
    expect_eq "$what: STATS uring" "$(stat uring "$st")" "$want"
    if [[ $want == on ]]; then
        check "$what: calls went through the ring in batches ($calls calls in $enters enters)" \
            test "${enters:-0}" -gt 0 -a "${calls:-0}" -gt $((2 * ${enters:-0})) \
                 -a "${calls:-0}" -le $((64 * ${enters:-0}))
    else
        expect_eq "$what: no call counted" "$calls $enters" "0 0"
    fi
    stop_server "$SRV_PID"
    expect_eq "$what: exits 0 on SIGTERM" "$STOP_RC" 0
    COUNTED=$(head -n 1 "$st")
}

# case_journal: case_load with --fsync everysec, then a restart on the
# journal: COUNT as acknowledged.
case_journal() {
    local j=$TEST_TMP/people.journal out=$TEST_TMP/count.out
    case_load "$KERNEL_URING" --journal "$j" --fsync everysec || return
    start_server buffered --io events --journal "$j" || return
    converse_str "$SRV_PORT" 'COUNT\nQUIT\n' "$out"
    expect_eq "--fsync everysec: after a restart, COUNT as acknowledged" \
        "$(head -n 1 "$out")" "$COUNTED"
    stop_server "$SRV_PID"
}

case_refused() {
    local err=$TEST_TMP/err rc
    "$BIN/ssnserver-buffered" -p 0 --uring on 2>"$err" </dev/null
    rc=$?
    expect_eq "--uring with --io threads: exit 2" "$rc" 2
    expect_match "... saying it works only with --io events" "$(cat "$err")" \
        'only with --io events'
    "$BIN/ssnserver-buffered" -p 0 --io events --uring maybe 2>"$err" </dev/null
    rc=$?
    expect_eq "--uring maybe: exit 2" "$rc" 2
    expect_match "... naming the value" "$(cat "$err")" "'maybe' is not on or off"
}

case_load "$KERNEL_URING"
case_load off --uring off
case_journal
case_refused
finish
