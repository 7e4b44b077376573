#!/bin/bash
# test-journal-compact.sh -- COMPACT and the automatic rewrite over real
# TCP: the journal shrinks to the live set and a restart finds the same
# store (each locked mode, both I/O models); a crash injected at each step
# of a compaction (SSN_TEST_COMPACT_CRASH, a seam of the test build in
# build/seams/) recovers the right state;
# compactions under pipelined load, then kill -9, lose nothing
# acknowledged; the automatic rewrite runs by itself past
# --journal-compact-min and twice the live size; without a journal, and
# on a full disk, COMPACT answers an error and changes nothing.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/journal.sh"

J=$TEST_TMP/people.journal

# churn_req N FILE: N people added, then all but every fifth deleted.
churn_req() {
    awk -v n="$1" 'BEGIN {
        for (i = 1; i <= n; i++)
            printf "ADD f%d churn%d %d %03d-%02d-%04d\n", i, i, i % 150,
                   i % 1000, i % 100, i % 10000
        for (i = 1; i <= n; i++)
            if (i % 5) printf "DELETE f%d churn%d\n", i, i
    }' >"$2"
}

# load_churn PORT N: churn_req's requests on one connection.
load_churn() {
    churn_req "$2" "$TEST_TMP/churn.req"
    echo QUIT >>"$TEST_TMP/churn.req"
    converse "$1" "$TEST_TMP/churn.req" "$TEST_TMP/churn.out" 20
}

case_no_journal() {
    start_server fine || return
    expect_eq "COMPACT without a journal: an error that says how" \
        "$(ask "$SRV_PORT" 'COMPACT\n')" \
        "Error: no journal (start the server with --journal FILE)"
    stop_server "$SRV_PID"
}

# In each locked mode (and once with --io events): the journal shrinks to
# exactly the live set's size, and a restart finds the same store.
case_compact_modes() {
    local mode io before after digest live
    for mode in serial coarse fine buffered buffered:events; do
        io=""
        [[ $mode == *:events ]] && io=events
        mode=${mode%:*}
        rm -f "$J"
        SSN_IO=$io start_server "$mode" --journal "$J" --fsync always || continue
        load_churn "$SRV_PORT" 500
        # journal_size: the length as written (the file also holds the
        # zeros reserved ahead while the server runs).
        before=$(stat_field "$SRV_PORT" journal_size)
        digest=$(ask "$SRV_PORT" 'DIGEST\n')
        expect_eq "$mode${io:+ events}: COMPACT answers OK" \
            "$(ask "$SRV_PORT" 'COMPACT\n')" OK
        after=$(stat_field "$SRV_PORT" journal_size)
        live=$(stat_field "$SRV_PORT" journal_live_bytes)
        check "$mode${io:+ events}: the journal shrank ($before to $after bytes)" \
            test "$after" -lt $((before / 3))
        expect_eq "$mode${io:+ events}: it holds exactly the live set" "$after" "$live"
        restart "$mode" --journal "$J" --fsync always || continue
        expect_eq "$mode${io:+ events}: after a restart, the same store" \
            "$(ask "$SRV_PORT" 'DIGEST\nCOUNT\nCHECK\n')" \
            "$(printf '%s\n100\nOK 100 entries, all invariants hold' "$digest")"
        expect_eq "$mode${io:+ events}: it goes on journaling after" \
            "$(ask "$SRV_PORT" 'ADD After Compact 5 555-55-5555\n')" OK
        restart "$mode" --journal "$J" --fsync always || continue
        expect_eq "$mode${io:+ events}: and that survives a restart too" \
            "$(ask "$SRV_PORT" 'COUNT\n')" 101
        stop_server "$SRV_PID"
    done
}

# A crash at each step of a compaction (the test build's seam): the
# restart, by the installed build, finds the store as it was, the
# unfinished file is removed, and the journal still works.
case_crash_steps() {
    local step digest got
    for step in snapshot written renamed switched; do
        rm -f "$J" "$J.compact"
        SSN_TEST_COMPACT_CRASH=$step start_seams_server buffered \
            --journal "$J" --fsync always || continue
        load_churn "$SRV_PORT" 2000
        digest=$(ask "$SRV_PORT" 'DIGEST\n')
        got=$(ask "$SRV_PORT" 'COMPACT\n')
        stop_server "$SRV_PID"
        # After the switch the reply may have left before the kill.
        [[ $step == switched && $got == OK ]] && got=""
        expect_eq "crash at '$step': no reply, the server was killed" \
            "$got:$STOP_RC" ":$((128 + 9))"
        start_server buffered --journal "$J" --fsync always || continue
        expect_eq "crash at '$step': the restart finds the same store" \
            "$(ask "$SRV_PORT" 'DIGEST\nCHECK\n')" \
            "$(printf '%s\nOK 400 entries, all invariants hold' "$digest")"
        check "crash at '$step': no unfinished file is left" test ! -e "$J.compact"
        case $step in
        snapshot|written)
            stop_server "$SRV_PID"
            expect_match "crash at '$step': the leftover was removed, and said so" \
                "$(cat "$SRV_ERR")" \
                "removed .*people.journal.compact, left by a compaction"
            start_server buffered --journal "$J" --fsync always || continue ;;
        esac
        expect_eq "crash at '$step': COMPACT works after the restart" \
            "$(ask "$SRV_PORT" 'COMPACT\nDELETE f5 churn5\nCOUNT\n')" \
            "$(printf 'OK\nOK\n399')"
        restart buffered --journal "$J" --fsync always || continue
        expect_eq "crash at '$step': and the journal after it replays" \
            "$(ask "$SRV_PORT" 'COUNT\n')" 399
        stop_server "$SRV_PID"
    done
}

# COMPACT again and again while 4 clients pipeline ADDs and DELETEs, then
# kill -9 (tests/lib/journal.sh checks what comes back).
compact_loop() {
    local i
    for ((i = 0; i < 200; i++)); do
        ask "$1" 'COMPACT\n' >/dev/null 2>&1 || return
        sleep 0.05
    done
}

case_compact_under_load() {
    kill9_cycles 1 "COMPACT under load, then kill -9" compact_loop \
        fine --journal "$J" --fsync always
    local n
    n=$(grep -c 'journal .*: compacted' "$TEST_TMP"/server*.err | \
        awk -F: '{ s += $NF } END { print s }')
    check "COMPACT under load: compactions finished during the load ($n)" \
        test "$n" -gt 0
}

# The automatic rewrite: past --journal-compact-min and twice the live
# size, the journal compacts itself, and stays bounded under churn.
case_auto() {
    local i size live n
    rm -f "$J"
    start_server fine --journal "$J" --fsync no --journal-compact-min 32k || return
    for ((i = 0; i < 4; i++)); do
        load_churn "$SRV_PORT" 1500
        ask "$SRV_PORT" 'DELETE f5 churn5\nDELETE f10 churn10\n' >/dev/null
        for ((n = 0; n < 50; n++)); do  # the one that may still run
            [[ $(stat_field "$SRV_PORT" journal_compacting) == 0 ]] && break
            sleep 0.1
        done
    done
    n=$(stat_field "$SRV_PORT" journal_compactions)
    size=$(stat_field "$SRV_PORT" journal_size)
    live=$(stat_field "$SRV_PORT" journal_live_bytes)
    check "auto: the journal compacted itself ($n times)" test "$n" -ge 2
    check "auto: it stays within twice the live size or the minimum ($size, live $live)" \
        test "$size" -le $(( 2 * live > 32768 ? 2 * live + 4096 : 32768 + 4096 ))
    local digest
    digest=$(ask "$SRV_PORT" 'DIGEST\n')
    restart fine --journal "$J" --fsync no --journal-compact-min 32k || return
    expect_eq "auto: a restart finds the same store" \
        "$(ask "$SRV_PORT" 'DIGEST\n')" "$digest"
    stop_server "$SRV_PID"
    start_server fine --journal "$J" --journal-compact-min 0 || return
    load_churn "$SRV_PORT" 1500
    expect_eq "auto: --journal-compact-min 0 never compacts by itself" \
        "$(stat_field "$SRV_PORT" journal_compactions)" 0
    stop_server "$SRV_PID"
    local err rc
    err=$(timeout 5 "$BIN/ssnserver-fine" -p 0 --journal-compact-min 12q 2>&1 </dev/null); rc=$?
    expect_eq "--journal-compact-min 12q is refused (exit 2)" "$rc" 2
    expect_match "--journal-compact-min 12q: names the value" "$err" "'12q'"
}

# A full disk: the new file cannot be written; COMPACT says so, the old
# journal is untouched and stays the journal.

case_disk_full() {
    local mnt
    mount_full "compaction on a full disk" || return
    mnt=$FULL_MNT
    start_server fine --journal "$mnt/j" --fsync always || { unmount_full; return; }
    load_churn "$SRV_PORT" 2000
    local digest size got
    digest=$(ask "$SRV_PORT" 'DIGEST\n')
    dd if=/dev/zero of="$mnt/filler" bs=4k status=none 2>/dev/null
    size=$(stat -c %s "$mnt/j")
    got=$(ask "$SRV_PORT" 'COMPACT\nCOUNT\n')
    expect_match "full disk: COMPACT answers the error" "$got" \
        $'^Error: compaction failed: [^\n]*No space left on device\n400$'
    expect_eq "full disk: the journal is untouched, no new file left" \
        "$(stat -c %s "$mnt/j"):$(ls "$mnt")" "$size:$(printf 'filler\nj')"
    rm -f "$mnt/filler"
    expect_eq "full disk: once there is room, COMPACT works" \
        "$(ask "$SRV_PORT" 'COMPACT\n')" OK
    restart fine --journal "$mnt/j" --fsync always
    expect_eq "full disk: a restart finds the same store" \
        "$(ask "$SRV_PORT" 'DIGEST\n')" "$digest"
    stop_server "$SRV_PID"
    unmount_full
}

case_no_journal
case_compact_modes
case_crash_steps
case_compact_under_load
case_auto
case_disk_full
finish
