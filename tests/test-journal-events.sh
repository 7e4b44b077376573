#!/bin/bash
# test-journal-events.sh -- --journal with --io events: a connection whose
# replies wait for the journal is held, not waited for, so one worker
# keeps serving its other connections and one sync covers many of them
# (group commit). With a worker that blocked in the wait, 20 clients with
# one ADD in flight each would get one sync per ADD (a group size of 1).
# run-all: beside
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/journal.sh"

J=$TEST_TMP/people.journal

case_group_commit_one_worker() {
    local mode group
    for mode in fine buffered; do
        rm -f "$J"
        SSN_IO=events start_server "$mode" --workers 1 --journal "$J" \
            --fsync always || continue
        add_2000
        expect_match "$mode, 1 worker: 2000 ADDs, all answered" \
            "$ANSWERED,$ACKED" '^2000,2000,[0-9]+$'
        group=$(ask "$SRV_PORT" 'STATS\n' | awk '$1 == "journal_group_size_avg" { print int($2) }')
        check "$mode, 1 worker: one sync covers several connections (group size $group)" \
            test "${group:-0}" -ge 3
        restart "$mode" --io events --journal "$J" --fsync always || continue
        expect_eq "$mode, 1 worker: a restart finds every acknowledged ADD" \
            "$(ask "$SRV_PORT" 'COUNT\n')" "$ACKED"
        stop_server "$SRV_PID"
    done
}

# A client that closes while its replies are held for the journal: the
# worker goes on, nothing leaks, the server stays healthy.
case_vanish_while_held() {
    local i pids=()
    rm -f "$J"
    SSN_IO=events start_server buffered --workers 1 --journal "$J" \
        --fsync always || return
    for ((i = 0; i < 30; i++)); do
        timeout 5 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
            printf "ADD v%d Vanish 1 111-11-1111\n" "$2" >&3
            exec 3>&-' _ "$SRV_PORT" "$i" 2>/dev/null &
        pids+=($!)
    done
    wait "${pids[@]}"
    expect_match "clients gone while held: the server still answers" \
        "$(ask "$SRV_PORT" 'ADD After Vanish 2 222-22-2222\nCHECK\n')" \
        $'^OK\nOK [0-9]+ entr(y|ies), all invariants hold$'
    stop_server "$SRV_PID"
    expect_eq "clients gone while held: a clean exit" "$STOP_RC" 0
}

# The worker's own round sends what it made durable: with everysec, 2000
# ADDs one at a time on 4 connections queue (almost) no reply to wait
# with the journal (STATS journal_async_waits; only a round of the
# flusher's 100 ms tick that took the records first makes one wait);
# with always, whose rounds are the flusher's, every one waits. Held
# replies that went back to waiting for the journal's notice
# (journal_wait_async) queue 2000 and fail the first check.
case_commit_sends_what_it_wrote() {
    local fsync waits out
    for fsync in everysec always; do
        rm -f "$J"
        SSN_IO=events start_server buffered --workers 1 --journal "$J" \
            --fsync "$fsync" || continue
        out=$("$CLIENTS_BIN/ssn-bench" -p "$SRV_PORT" -c 4 -P 1 \
              --mix 1:0:0 -n 2000 --keys 1000000000 --csv 2>&1)
        expect_match "$fsync: 2000 ADDs, all answered" \
            "$(tail -n 1 <<<"$out" | cut -d, -f8,9)" '^2000,2000$'
        waits=$(ask "$SRV_PORT" 'STATS\n' | awk '$1 == "journal_async_waits" { print $2 }')
        if [[ $fsync == everysec ]]; then
            check "everysec: the worker's rounds sent the held replies, under 100 of 2000 waited with the journal ($waits)" \
                test "${waits:-9999}" -lt 100
        else
            check "always: replies waited for the flusher's rounds ($waits of 2000)" \
                test "${waits:-0}" -ge 1000
        fi
        stop_server "$SRV_PID"
    done
}

# counted_adds LABEL FSYNC CONNS N: one worker, the journal with FSYNC, N
# ADDs of fresh keys one in flight on each of CONNS connections, under the
# LD_PRELOAD wrapper that counts the server's epoll_ctl and epoll_wait
# calls (tests/count_epoll_ctl.c): only with the plain build, as a
# sanitizer's runtime must come first. Sets CTLS and WAITS; returns 1
# (having said SKIP or why) when there is nothing to count.
counted_adds() {
    local label=$1 fsync=$2 conns=$3 n=$4 out
    local so=${BUILD:-build}/tests/count-epoll-ctl.so
    CTLS="" WAITS=""
    if [[ "$BIN" != bin || ! -f "$so" ]]; then
        ok "# SKIP $label: plain build only (BIN=$BIN)"
        return 1
    fi
    rm -f "$J"
    LD_PRELOAD=$PWD/$so SSN_COUNT_EPOLL_CTL=$TEST_TMP/epoll_ctl \
        SSN_IO=events start_server buffered --workers 1 --journal "$J" \
        --fsync "$fsync" || return 1
    out=$("$CLIENTS_BIN/ssn-bench" -p "$SRV_PORT" -c "$conns" -P 1 \
          --mix 1:0:0 -n "$n" --keys 1000000000 --csv 2>&1)
    expect_match "$label: $n ADDs, all answered" \
        "$(tail -n 1 <<<"$out" | cut -d, -f8,9)" "^$n,$n\$"
    stop_server "$SRV_PID"
    read -r CTLS WAITS < "$TEST_TMP/epoll_ctl"
}

# A connection whose replies wait for the journal keeps its socket armed
# for reading: with one request in flight the client sends nothing more
# until answered, so holding and releasing it costs no epoll_ctl. Stopping
# and restarting the read event for each ADD cost two (with --fsync always
# a third of the server's system calls, and a quarter of its rate with one
# worker, when it was measured).
case_held_costs_no_epoll_ctl() {
    counted_adds "epoll_ctl count" always 20 4000 || return
    check "held replies cost no epoll_ctl per request (${CTLS:-no count} for 4000 ADDs on 20 connections)" \
        test "${CTLS:-999999}" -lt 400
}

# One poll a request: with --fsync everysec the worker writes the pass's
# records itself (journal_commit), and the held replies leave in the same
# pass: 2000 ADDs one at a time on one connection cost about 2000
# epoll_wait calls (the poll that finds each). With the commit at a lower
# priority than the connections' events each pass polled twice more, 3
# a request.
case_one_poll_a_request() {
    counted_adds "epoll_wait count" everysec 1 2000 || return
    check "everysec, one connection: one poll a request (${WAITS:-no count} for 2000 ADDs)" \
        test "${WAITS:-999999}" -lt 3000
}

# Requests, and the idle time-out, that reach a connection while its
# replies are held: with every sync 1.5 s late (the test seam, so the
# test build of the server), A's ADD
# holds worker 0 in its round; B and D, on worker 1 (round robin), send an
# ADD each, held for the round after it. B sends COUNT while held: read
# only once its ADD is durable, and answered after it. D sends nothing
# more, and outlives its --timeout of 1 s held: a held connection is not
# idle.
case_more_while_held() {
    local a b c d
    rm -f "$J"
    SSN_IO=events SSN_TEST_JOURNAL_FAIL=slow:1500 start_seams_server buffered \
        --workers 2 --timeout 1 --journal "$J" --fsync always || return
    open_conn "$SRV_PORT"; a=$CONN
    open_conn "$SRV_PORT"; b=$CONN
    open_conn "$SRV_PORT"; c=$CONN
    open_conn "$SRV_PORT"; d=$CONN
    send_line "$a" "ADD Held Anna 30 123-45-6781"
    sleep 0.2
    send_line "$b" "ADD Held Bert 31 123-45-6782"
    send_line "$d" "ADD Held Dora 33 123-45-6784"
    sleep 0.3
    send_line "$b" "COUNT"
    read_line "$a" 10
    expect_eq "held: A's ADD answered after its round" "$LINE" OK
    read_line "$b" 10
    expect_eq "held: B's ADD answered" "$LINE" OK
    read_line "$b" 10
    expect_eq "held: B's COUNT, sent while held, answered after its ADD" \
        "$LINE" 3
    read_line "$d" 10
    expect_eq "held: D, held past --timeout 1, still answered" "$LINE" OK
    close_conn "$a"; close_conn "$b"; close_conn "$c"; close_conn "$d"
    stop_server "$SRV_PID"
    expect_eq "held: a clean exit" "$STOP_RC" 0
}

# The worker never waits for the journal: with every sync 1.5 s late (the
# test build's seam) and one worker, A's ADD is in its round while B, on
# the same worker, is answered at once; and A's "ADD then PRINT" in fine
# mode, whose streamed PRINT must not find A's OK queued ahead of it once
# it holds the lock, waits for the round without holding the worker
# either. With a worker that led the round itself (or waited in the
# PRINT), B waited the whole 1.5 s.
case_worker_answers_during_round() {
    local mode a b t0 ms
    for mode in fine buffered; do
        rm -f "$J"
        SSN_IO=events SSN_TEST_JOURNAL_FAIL=slow:1500 start_seams_server "$mode" \
            --workers 1 --journal "$J" --fsync always || continue
        open_conn "$SRV_PORT"; a=$CONN
        open_conn "$SRV_PORT"; b=$CONN
        send_line "$a" "ADD Slow Sync 30 123-45-6781"
        send_line "$a" "PRINT"
        sleep 0.2
        t0=$(now)
        send_line "$b" "FIND Nobody Here"
        read_line "$b" 10
        ms=$(elapsed_ms "$t0")
        expect_eq "$mode: during A's round, B's FIND answered" "$LINE" \
            "Error: Nobody Here not found"
        check "$mode: ... within 500 ms, not after the 1.5 s sync ($ms ms)" \
            test "$ms" -lt 500
        read_line "$a" 10
        expect_eq "$mode: A's ADD answered after its round" "$LINE" OK
        read_line "$a" 10
        expect_eq "$mode: A's PRINT after it" "$LINE" "$(printf "%.0s_" {1..50})"
        close_conn "$a"; close_conn "$b"
        stop_server "$SRV_PID"
        expect_eq "$mode: a clean exit" "$STOP_RC" 0
    done
}

# COMPACT on an event worker: its outcome is waited for without blocking
# the worker (the request waits, and runs again when the journal says the
# compaction ended). With the snapshot's sync 1.5 s late, B, on the same
# worker, is answered at once; A's COMPACT, and the COUNT after it, come
# after the compaction. The worker that blocked in journal_compact_wait
# made B wait the whole compaction.
case_compact_does_not_block_worker() {
    local mode a b t0 ms
    for mode in coarse buffered; do
        rm -f "$J"
        SSN_IO=events SSN_TEST_JOURNAL_FAIL=slow:1500 start_seams_server \
            "$mode" --workers 1 --journal "$J" --fsync no || continue
        open_conn "$SRV_PORT"; a=$CONN
        send_line "$a" "ADD Comp Act 30 123-45-6781"
        send_line "$a" "DELETE Comp Act"
        read_line "$a" 10; read_line "$a" 10
        send_line "$a" "COMPACT"
        send_line "$a" "COUNT"
        sleep 0.2
        if [[ $mode == coarse ]]; then
            # B waits for the lock A's session holds: what it shows is that
            # the worker still runs (B's connection is taken and parked).
            t0=$(now)
            read_line "$a" 10
            ms=$(elapsed_ms "$t0")
            expect_eq "$mode: COMPACT answered after the compaction" "$LINE" OK
            check "$mode: ... not before the slow sync ($ms ms)" \
                test "$ms" -ge 900
        else
            open_conn "$SRV_PORT"; b=$CONN
            t0=$(now)
            send_line "$b" "FIND Nobody Here"
            read_line "$b" 10
            ms=$(elapsed_ms "$t0")
            expect_eq "$mode: during A's COMPACT, B's FIND answered" "$LINE" \
                "Error: Nobody Here not found"
            check "$mode: ... within 500 ms, not after the compaction ($ms ms)" \
                test "$ms" -lt 500
            close_conn "$b"
            read_line "$a" 10
            expect_eq "$mode: A's COMPACT answered after the compaction" \
                "$LINE" OK
        fi
        read_line "$a" 10
        expect_eq "$mode: A's COUNT, sent after COMPACT, after it" "$LINE" 0
        close_conn "$a"
        stop_server "$SRV_PID"
        expect_eq "$mode: a clean exit" "$STOP_RC" 0
    done
}

case_group_commit_one_worker
case_worker_answers_during_round
case_compact_does_not_block_worker
case_vanish_while_held
case_commit_sends_what_it_wrote
case_held_costs_no_epoll_ctl
case_one_poll_a_request
case_more_while_held
finish
