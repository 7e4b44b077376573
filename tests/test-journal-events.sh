#!/bin/bash
# test-journal-events.sh -- --journal with --io events: a connection whose
# replies wait for the journal is held, not waited for, so one worker
# keeps serving its other connections and one sync covers many of them
# (group commit). With a worker that blocked in the wait, 20 clients with
# one ADD in flight each would get one sync per ADD (a group size of 1).
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/journal.sh"

J=$TEST_TMP/people.journal

case_group_commit_one_worker() {
    local mode out group
    for mode in fine buffered; do
        rm -f "$J"
        SSN_IO=events start_server "$mode" --workers 1 --journal "$J" \
            --fsync always || continue
        out=$("$BIN/ssn-bench" -p "$SRV_PORT" -c 20 -P 1 --mix 1:0:0 \
              -n 2000 --keys 100000 --csv 2>&1)
        expect_match "$mode, 1 worker: 2000 ADDs, all answered" \
            "$(tail -n 1 <<<"$out" | cut -d, -f8,9,13)" '^2000,2000,[0-9]+$'
        group=$(ask "$SRV_PORT" 'STATS\n' | awk '$1 == "journal_group_size_avg" { print int($2) }')
        check "$mode, 1 worker: one sync covers several connections (group size $group)" \
            test "${group:-0}" -ge 3
        restart "$mode" --io events --journal "$J" --fsync always || continue
        expect_eq "$mode, 1 worker: a restart finds every acknowledged ADD" \
            "$(ask "$SRV_PORT" 'COUNT\n')" \
            "$(tail -n 1 <<<"$out" | cut -d, -f13)"
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
        $'^OK\nOK [0-9]+ entries, all invariants hold$'
    stop_server "$SRV_PID"
    expect_eq "clients gone while held: a clean exit" "$STOP_RC" 0
}

case_group_commit_one_worker
case_vanish_while_held
finish
