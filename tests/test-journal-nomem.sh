#!/bin/bash
# test-journal-nomem.sh -- the journal when memory runs out, over real TCP.
#
# A compaction whose rewrite buffer cannot grow (the test seam
# SSN_TEST_JOURNAL_FAIL=rewrite:N, in the test build of the servers,
# build/seams/) while four clients pipeline ADDs and DELETEs: the
# compaction that met the failure answers an error and leaves the old
# journal in place, or completes when nothing failed, and after kill -9 a
# restart, by the installed build and without --journal-truncate, finds
# every acknowledged mutation (tests/lib/acked.sh), with --io threads and
# --io events. Until the switch checked it, a record the rewrite buffer
# could not take just before the switch was missing from the new journal
# and yet acknowledged: an ADD lost, a DELETE undone, and the journal
# refused at the next start as damaged.
#
# A replay that runs out of memory under a real limit (prlimit --as):
# exit 4, "out of memory" with the file and how far it got, and the file
# untouched, with --journal-truncate too; until then it was called damage
# and --journal-truncate cut the good records after it.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/journal.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/acked.sh"

J=$TEST_TMP/people.journal
CLIENTS=4

# load_req TAG N FILE: N ADDs of new names, each of all but every fifth
# deleted two requests later, then QUIT.
load_req() {
    awk -v t="$1" -v n="$2" 'BEGIN {
        for (i = 1; i <= n; i++) {
            printf "ADD f%d %s_%d %d %03d-%02d-%04d\n", i, t, i, i % 150,
                   i % 1000, i % 100, i % 10000
            if (i > 2 && (i - 2) % 5)
                printf "DELETE f%d %s_%d\n", i - 2, t, i - 2
        }
        print "QUIT" }' >"$3"
}

# clients_start PORT TAG N: CLIENTS connections in the background, each
# sending its load whole and saving what it reads; their PIDs in
# CLIENT_PIDS.
clients_start() {
    local c
    CLIENT_PIDS=()
    for ((c = 1; c <= CLIENTS; c++)); do
        load_req "$2c$c" "$3" "$TEST_TMP/load$c"
        : >"$TEST_TMP/replies$c"
        timeout 60 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
            cat <&3 >"$3" & cat "$2" >&3; wait $!' _ "$1" \
            "$TEST_TMP/load$c" "$TEST_TMP/replies$c" 2>/dev/null &
        CLIENT_PIDS+=($!)
    done
}

# compacts PORT OUT: COMPACT on one connection, each answered before the
# next, while any client runs (and 3 times at least); the replies in OUT.
compacts() {
    local i conn line
    : >"$2"
    exec {conn}<>"/dev/tcp/127.0.0.1/$1" || return
    for ((i = 0; i < 200; i++)); do
        printf 'COMPACT\n' >&"$conn"
        IFS= read -r -t 20 -u "$conn" line || break
        echo "$line" >>"$2"
        ((i >= 2)) || continue
        local c live=0
        for c in "${CLIENT_PIDS[@]}"; do
            kill -0 "$c" 2>/dev/null && live=1
        done
        ((live)) || break
    done
    exec {conn}>&-
}

# restart_check LABEL MODE IO: the installed build on $J, without
# --journal-truncate, then the acknowledged mutations of every client
# (loadK and repliesK in TEST_TMP) checked against PRINT.
restart_check() {
    local label=$1 mode=$2 io=$3 f fates=$TEST_TMP/fates
    if SSN_IO=$io start_server "$mode" --journal "$J" --fsync always; then
        ok "$label: the restart starts without --journal-truncate"
    else
        not_ok "$label: the restart starts without --journal-truncate"
        # To show what the journal lost: what it holds up to the damage.
        SSN_IO=$io start_server "$mode" --journal "$J" --fsync always \
            --journal-truncate || return 1
    fi
    converse_str "$SRV_PORT" 'PRINT\nCOUNT\nQUIT\n' "$TEST_TMP/print" 30
    rm -f "$fates"
    local pairs=()
    for f in "$TEST_TMP"/load*; do
        pairs+=("$f" "$TEST_TMP/replies${f##*load}")
    done
    acked_fold "$fates" "${pairs[@]}"
    acked_check "$fates" "$TEST_TMP/print" "$TEST_TMP/bad"
    case $? in
    0) ok "$label: all $ACKED acknowledged mutations are there, nothing unsent" ;;
    2) not_ok "$label: PRINT after the restart is whole" ;;
    *) not_ok "$label: all $ACKED acknowledged mutations are there, nothing unsent"
       head -n 5 "$TEST_TMP/bad" | sed 's/^/#   /'
       echo "#   ($(wc -l <"$TEST_TMP/bad") in all)" ;;
    esac
    expect_match "$label: CHECK holds" "$(ask "$SRV_PORT" 'CHECK\n')" \
        '^OK [0-9]+ entr(y|ies), all invariants hold'
    stop_server "$SRV_PID"
}

# One run: a seams server of MODE and IO with SEAM armed, a store of 3000
# people first (so that each snapshot takes a while); then, in the STYLE
# "race", the clients and COMPACT again and again while they run; in the
# STYLE "window", one COMPACT, and the clients 100 ms later, when its new
# file is ready and the switch is held back (SEAM has switch:N), so that
# their appends meet the rewrite buffer in the window before the switch.
# kill -9 once they are done, then restart_check. WANT: the COMPACT
# replies expected, "nomem" (one failed with ENOMEM, all others OK) or
# "ok" (all OK).
compact_fault_run() {
    local mode=$1 io=$2 style=$3 seam=$4 want=$5
    local label="$mode --io $io, $style, $seam"
    rm -f "$J" "$J.compact" "$TEST_TMP"/load* "$TEST_TMP"/replies*
    SSN_IO=$io SSN_TEST_JOURNAL_FAIL=$seam start_seams_server "$mode" \
        --journal "$J" --fsync always --journal-compact-min 0 || return
    awk 'BEGIN { for (i = 1; i <= 3000; i++)
                   printf "ADD p%d pre_%d 1 111-11-1111\n", i, i
                 print "QUIT" }' >"$TEST_TMP/load0"
    converse "$SRV_PORT" "$TEST_TMP/load0" "$TEST_TMP/replies0" 20
    local tag=${mode:0:1}${io:0:1}${style:0:1}${seam//[^0-9a-z]/}
    if [[ $style == race ]]; then
        clients_start "$SRV_PORT" "$tag" 3000
        compacts "$SRV_PORT" "$TEST_TMP/compacts"
    else
        CLIENT_PIDS=()
        timeout 20 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
            printf "COMPACT\nQUIT\n" >&3; head -n 1 <&3 >"$2"' _ \
            "$SRV_PORT" "$TEST_TMP/compacts" 2>/dev/null &
        local cpid=$!
        sleep 0.1
        clients_start "$SRV_PORT" "$tag" 1500
        wait "$cpid"
    fi
    wait "${CLIENT_PIDS[@]}"
    stop_server "$SRV_PID" KILL
    local n_all n_ok n_nomem
    n_all=$(wc -l <"$TEST_TMP/compacts")
    n_ok=$(grep -c '^OK$' "$TEST_TMP/compacts")
    n_nomem=$(grep -c '^Error: compaction failed: .*Cannot allocate memory$' \
              "$TEST_TMP/compacts")
    if [[ $want == nomem ]]; then
        expect_eq "$label: one COMPACT failed for want of memory, the others OK" \
            "$n_nomem:$n_ok" "1:$((n_all - 1))"
    else
        expect_eq "$label: COMPACT answered OK" "$n_ok:$n_all" "$n_all:$n_all"
    fi
    check "$label: COMPACT answered ($n_all replies)" test "$n_all" -ge 1
    restart_check "$label" "$mode" "$io"
}

# The window before the switch, where the allocation failed before the
# fix (the record dropped from the rewrite buffer, the new file switched
# in all the same): now rewrite:1 is the room the compactor reserves for
# that window before it (the compaction fails, cleanly), and with
# rewrite:2 nothing is allocated in the window at all (it completes).
# Then the N-th growth of the rewrite buffer failing while clients race
# the compactions.
case_compact_nomem() {
    local run mode io
    for run in fine:threads:1 buffered:events:2; do
        mode=${run%%:*} io=$(cut -d: -f2 <<<"$run")
        compact_fault_run "$mode" "$io" window rewrite:1,switch:1000 nomem
        compact_fault_run "$mode" "$io" window rewrite:2,switch:1000 ok
        compact_fault_run "$mode" "$io" race "rewrite:${run##*:}" nomem
    done
}

# ---- a replay that runs out of memory -------------------------------------

# vm_kb PID FIELD: VmPeak or VmSize of a running server, in kB.
vm_kb() {
    awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"
}

# limited_start KB ARGS...: ssnserver-fine -p 0 ARGS under prlimit, its
# threads' stacks 1 MiB and, when KB is not 0, its address space KB kB;
# srv_start's answer (SRV_PID, SRV_PORT, or SRV_RC after a failed start),
# its stderr in LIM_ERR.
limited_start() {
    local kb=$1 n=$SERVERS_STARTED as=()
    shift
    LIM_ERR=$TEST_TMP/server$n.err
    SERVERS_STARTED=$((n + 1))
    ((kb)) && as=(--as=$((kb * 1024)))
    SRV_RC=""
    srv_start "$TEST_TMP/server$n.out" "$LIM_ERR" 20 prlimit --stack=1048576 \
        "${as[@]}" "$BIN/ssnserver-fine" -p 0 "$@"
}

# A journal of 200,000 people replayed under a real limit on the address
# space (prlimit --as), with the threads' stacks small (--stack) so that
# the replay's own memory is most of what varies: the limit starts
# halfway between the server's size on an empty journal and its peak on
# this one, and moves until the replay runs out part of the way through.
# Every start that fails must exit 4, say "out of memory" with the file
# and how far it got, and leave the file as it was (size and SHA-256),
# with --journal-truncate too. The plain build only: a sanitizer reserves
# terabytes of address space.
case_replay_nomem() {
    local big=$TEST_TMP/big.journal empty=$TEST_TMP/empty.journal
    local people=200000
    if [[ $BIN == *san* ]]; then
        ok "# SKIP replay out of memory: RLIMIT_AS and a sanitizer ($BIN) do not mix"
        return
    fi
    if ! command -v prlimit >/dev/null; then
        not_ok "prlimit is installed (util-linux)"
        return
    fi
    rm -f "$big" "$empty"
    start_server buffered --journal "$big" --fsync no || return
    "$BIN/ssn-bench" -p "$SRV_PORT" -c 4 -P 16 --preload "$people" \
        --keys "$people" -n 1 --mix 0:1:0 >/dev/null 2>&1
    stop_server "$SRV_PID"
    local size sum
    size=$(stat -c %s "$big")
    sum=$(sha256sum <"$big")
    check "replay OOM: a journal of $people people was written ($size bytes)" \
        test "$size" -gt $((people * 30))

    local lo hi
    limited_start 0 --journal "$empty" --fsync always || return
    lo=$(vm_kb "$SRV_PID" VmSize)
    stop_server "$SRV_PID"
    limited_start 0 --journal "$big" --fsync always || return
    hi=$(vm_kb "$SRV_PID" VmPeak)
    stop_server "$SRV_PID"

    local probe lim trunc err n="" changed=0 other=""
    for ((probe = 1; probe <= 10; probe++)); do
        lim=$(( (lo + hi) / 2 ))
        trunc=--journal-truncate
        ((probe % 2)) || trunc=""
        if limited_start "$lim" --journal "$big" --fsync always $trunc; then
            stop_server "$SRV_PID"
            hi=$lim                     # it started: too much memory
        else
            err=$(cat "$LIM_ERR")
            if [[ $SRV_RC == 4 &&
                  $err =~ $big:\ out\ of\ memory\ after\ replaying\ ([0-9]+)\ records ]] &&
               ((BASH_REMATCH[1] > 0 && BASH_REMATCH[1] < people)); then
                n=${BASH_REMATCH[1]}
            elif [[ $SRV_RC == 4 ]]; then
                lo=$lim                 # before the first record
            elif [[ $err == *"journal thread"* ]]; then
                hi=$lim                 # replayed, but no room for a thread
            else
                other="exit $SRV_RC under $lim kB: $err"
            fi
        fi
        [[ $(stat -c %s "$big"):$(sha256sum <"$big") == "$size:$sum" ]] ||
            changed=$probe
        [[ -z $n && -z $other && $changed == 0 ]] || break
    done
    expect_eq "replay OOM: no start failed but for want of memory (exit 4)" \
        "$other" ""
    expect_eq "replay OOM: the journal is untouched after each try" \
        "$changed" 0
    check "replay OOM: a limit ran out part of the way ($n of $people records, $lim kB${trunc:+, $trunc})" \
        test -n "$n"
    expect_match "replay OOM: it says so, how far it got, and what to do" \
        "$(cat "$LIM_ERR")" \
        "^ssnserver: --journal: $big: out of memory after replaying $n records \(byte [0-9]+ of $size, $n people\); the journal is untouched: start again with more memory"
    [[ -n $n ]] || return
    # The other of the two: with --journal-truncate when the try above
    # had none, and the other way round.
    if [[ -n $trunc ]]; then trunc=""; else trunc=--journal-truncate; fi
    limited_start "$lim" --journal "$big" --fsync always $trunc &&
        stop_server "$SRV_PID"
    expect_eq "replay OOM${trunc:+ with $trunc} too: exit 4, the journal untouched" \
        "$SRV_RC:$(stat -c %s "$big"):$(sha256sum <"$big")" "4:$size:$sum"
    start_server fine --journal "$big" --fsync always || return
    expect_eq "replay OOM: with room again, all $people people are back" \
        "$(ask "$SRV_PORT" 'COUNT\n')" "$people"
    stop_server "$SRV_PID"
}

case_compact_nomem
case_replay_nomem
finish
