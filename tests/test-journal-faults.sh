#!/bin/bash
# test-journal-faults.sh -- the journal's failed write and failed sync over
# real TCP, through the test seam SSN_TEST_JOURNAL_FAIL (server/journal/
# journal_seams.c, in the test build of the servers, build/seams/), not a
# failing device: with --fsync always, in serial,
# coarse, fine, buffered and both of the last two with --io events, the
# client whose ADD was in the failed round gets no reply and its
# connection is closed; the log and STATS say read-only; later ADDs and
# DELETEs get the journal's error; reads and new connections go on; a
# restart, by the installed build, finds every acknowledged ADD and is
# writable.
# With --fsync everysec a failed sync turns the server read-only too,
# after the OK (which waits only for the write), and a failed write as
# with always, in both I/O models. A malformed seam is logged and ignored.
#
# The requests go over connections this shell holds (/dev/tcp), one at a
# time, not through ask: a process per request would take most of a
# minute for the 15 servers here.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/journal.sh"

trap '' PIPE                    # a request to a closed connection: EPIPE

J=$TEST_TMP/people.journal
EIO="Input/output error"

# The K-th person, and the request that adds it.
person() { echo "P$1 Fault $1 $((100 + $1))-11-1111"; }

# log_has FILE ERE: the log, written by its own thread, says ERE within 2 s.
log_has() {
    local t
    for ((t = 0; t < 100; t++)); do
        grep -qE "$2" "$1" && return 0
        sleep 0.02
    done
    return 1
}

# fault_round LABEL OP: on the running server, armed with OP:3, two ADDs
# (two rounds) are acknowledged, the third ADD's round fails, and then
# the server is read-only but still answers, on a new connection.
fault_round() {
    local label=$1 op=$2
    local err="Error: read-only: journal $op failed: $EIO"
    open_conn "$SRV_PORT"
    say "ADD $(person 1)" "ADD $(person 2)" QUIT
    close_conn "$CONN"
    expect_eq "$label: the two ADDs before the fault are acknowledged" \
        "$T" $'OK\nOK\nBye'
    open_conn "$SRV_PORT"
    say "ADD $(person 3)"
    close_conn "$CONN"
    expect_eq "$label: the ADD in the failed round gets no reply, its connection is closed" \
        "$T" "(closed)"
    check "$label: the log says the server is now read-only" \
        log_has "$SRV_ERR" "journal $J: journal $op failed: $EIO; the server is now read-only"

    open_conn "$SRV_PORT"
    stats_field journal_readonly
    expect_eq "$label: a new connection; STATS says journal_readonly 1" "$R" 1
    say "ADD $(person 4)" "DELETE P1 Fault"
    expect_eq "$label: a later ADD and DELETE get the journal's error" \
        "$T" "$err"$'\n'"$err"
    # The failed ADD stays in memory until the restart: reads are not
    # gated by durability (docs/DURABILITY.md, "Faults").
    say "FIND P1 Fault" "FIND P3 Fault" COUNT
    expect_eq "$label: FIND and COUNT still answer, the failed ADD in memory" \
        "$T" "$(print_line $(person 1); print_line $(person 3); echo 3)"
    model_reset
    model_add $(person 1); model_add $(person 2); model_add $(person 3)
    upto "$TAIL_LINE" PRINT
    expect_eq "$label: PRINT still answers" "$T" "$(model_print)"
    say QUIT
    close_conn "$CONN"
    check "$label: the server keeps running" srv_running "$SRV_PID"
}

# after_restart LABEL OP: the server started again on the same journal
# without the seam: the acknowledged ADDs are there and it is writable.
after_restart() {
    local label=$1 op=$2 third
    # A write that fails writes nothing; a sync that fails follows a real
    # write, whose pages the kernel still writes back (the seam cannot drop
    # them as a failing disk may), so the unacknowledged ADD is there.
    # Either is allowed: it was never acknowledged.
    if [[ $op == write ]]; then
        third="Error: P3 Fault not found"
    else
        third=$(print_line $(person 3))
    fi
    open_conn "$SRV_PORT"
    say "FIND P1 Fault" "FIND P2 Fault" "FIND P3 Fault"
    expect_eq "$label, restarted: the acknowledged ADDs are there, P3 as the seam left it" \
        "$T" "$(print_line $(person 1); print_line $(person 2); echo "$third")"
    say "ADD $(person 5)" "DELETE P2 Fault"
    expect_eq "$label, restarted: writable again" "$T" $'OK\nOK'
    say CHECK
    expect_match "$label, restarted: CHECK holds" \
        "$T" '^OK [0-9]+ entries, all invariants hold$'
    stats_field journal_readonly
    expect_eq "$label, restarted: journal_readonly 0" "$R" 0
    say QUIT
    close_conn "$CONN"
}

# Each locked mode, and two of them with --io events; a failed sync, then
# a failed write.
case_always() {
    local run mode io op label
    for run in serial coarse fine buffered fine:events buffered:events; do
        mode=${run%:*} io=""
        [[ $run == *:events ]] && io=events
        for op in sync write; do
            label="$mode${io:+ events}, $op:3"
            rm -f "$J"
            SSN_IO=$io SSN_TEST_JOURNAL_FAIL=$op:3 start_seams_server \
                "$mode" --journal "$J" --fsync always || continue
            fault_round "$label" "$op"
            stop_server "$SRV_PID"
            expect_eq "$label: a read-only server stops cleanly" "$STOP_RC" 0
            SSN_IO=$io start_server "$mode" --journal "$J" --fsync always ||
                continue
            after_restart "$label" "$op"
            stop_server "$SRV_PID"
        done
    done
    expect_match "the seam says at start-up that it is armed" \
        "$(cat "$TEST_TMP/server0.err")" \
        "test seam SSN_TEST_JOURNAL_FAIL=sync:3: the syncs of records fail with EIO from number 3 on"
}

# --fsync everysec: the OK leaves once the record is written; the
# flusher's sync, within a second or so, fails and makes the server
# read-only; the acknowledged ADD survives a restart.
case_everysec() {
    local io=$1 t err="Error: read-only: journal sync failed: $EIO"
    rm -f "$J"
    SSN_IO=$io SSN_TEST_JOURNAL_FAIL=sync:1 start_seams_server fine \
        --journal "$J" --fsync everysec || return
    open_conn "$SRV_PORT"
    say "ADD $(person 1)"
    expect_eq "everysec $io: the ADD is acknowledged before any sync" "$T" OK
    for ((t = 0; t < 30; t++)); do
        stats_field journal_readonly
        [[ $R == 1 ]] && break
        sleep 0.1
    done
    expect_eq "everysec $io: the failed sync makes the server read-only (STATS)" "$R" 1
    check "everysec $io: the log says so" \
        log_has "$SRV_ERR" "journal $J: journal sync failed: $EIO; the server is now read-only"
    say "ADD $(person 2)" "DELETE P1 Fault" COUNT QUIT
    close_conn "$CONN"
    expect_eq "everysec $io: a later ADD and DELETE get the journal's error" \
        "$T" "$err"$'\n'"$err"$'\n1\nBye'
    SSN_IO=$io restart fine --journal "$J" --fsync everysec || return
    open_conn "$SRV_PORT"
    say "FIND P1 Fault" "ADD $(person 2)" QUIT
    close_conn "$CONN"
    expect_eq "everysec $io, restarted: the acknowledged ADD is there, writable again" \
        "$T" "$(print_line $(person 1))"$'\nOK\nBye'
    stop_server "$SRV_PID"
}

# --fsync everysec, a failed write: the round that writes the third ADD
# fails, led by the session (threads) or by the event worker itself, which
# writes its pass's records (journal_commit): the same outcome as with
# always, and no acknowledged ADD lost.
case_everysec_write() {
    local io label
    for io in threads events; do
        label="buffered $io everysec, write:3"
        rm -f "$J"
        SSN_IO=$io SSN_TEST_JOURNAL_FAIL=write:3 start_seams_server \
            buffered --journal "$J" --fsync everysec || continue
        fault_round "$label" write
        stop_server "$SRV_PID"
        expect_eq "$label: a read-only server stops cleanly" "$STOP_RC" 0
        SSN_IO=$io start_server buffered --journal "$J" --fsync everysec ||
            continue
        after_restart "$label" write
        stop_server "$SRV_PID"
    done
}

# A malformed value arms nothing, and the log says it was ignored.
case_malformed() {
    local v
    for v in sync:0 write:3x flush:1 slow:60001; do
        rm -f "$J"
        SSN_TEST_JOURNAL_FAIL=$v start_seams_server fine --journal "$J" \
            --fsync always || continue
        open_conn "$SRV_PORT"
        say "ADD $(person 1)" "ADD $(person 2)" "ADD $(person 3)" \
            "ADD $(person 4)" QUIT
        close_conn "$CONN"
        expect_eq "SSN_TEST_JOURNAL_FAIL=$v: nothing fails" \
            "$T" $'OK\nOK\nOK\nOK\nBye'
        check "SSN_TEST_JOURNAL_FAIL=$v: logged as ignored" \
            log_has "$SRV_ERR" "SSN_TEST_JOURNAL_FAIL=\"$v\" ignored"
        stop_server "$SRV_PID"
    done
}

case_always
case_everysec threads
case_everysec events
case_everysec_write
case_malformed
finish
