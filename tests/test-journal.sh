#!/bin/bash
# test-journal.sh -- --journal over real TCP: a restart keeps the people
# (each fsync policy, each locked mode); with a thread per connection no
# session sleeps for durability (held replies); kill -9 under pipelined load with
# --fsync always loses no acknowledged mutation and shows nothing unsent; a
# torn tail is cut; a damaged middle record is refused, then cut with
# --journal-truncate; a foreign file is refused and left alone; nolock
# refuses --journal; a full disk (a 1 MB tmpfs mounted here, root only)
# refuses writes with an error, never an OK that is not durable, and
# writes work again once there is room.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/journal.sh"

J=$TEST_TMP/people.journal
# The record of "ADD A One 1 111-11-1111": length and CRC (8), op (1),
# "A" (1 + 1), "One" (1 + 3), age (1), SSN (11). The header is 16 bytes.
REC_A_ONE=27

# ---- a restart keeps the people -----------------------------------------

case_restart_keeps() {
    local run mode pol got
    for run in fine:always fine:everysec fine:no coarse:always \
               buffered:no serial:everysec; do
        mode=${run%:*} pol=${run#*:}
        {
            rm -f "$J"
            start_server "$mode" --journal "$J" --fsync "$pol" || continue
            ask "$SRV_PORT" 'ADD John Smith 30 123-45-6789\nADD Jane Doe 40 111-22-3333\nADD Ann Lee 7 222-33-4444\nDELETE John Smith\n' >/dev/null
            restart "$mode" --journal "$J" --fsync "$pol" || continue
            got=$(ask "$SRV_PORT" 'COUNT\nFIND Jane Doe\nFIND John Smith\nCHECK\n')
            expect_eq "$mode --fsync $pol: a restart keeps every change" \
                "$got" "$(printf '2\n%s\nError: John Smith not found\nOK 2 entries, all invariants hold' \
                          "$(print_line Jane Doe 40 111-22-3333)")"
            stop_server "$SRV_PID"
        }
    done
    expect_match "the log says what was recovered" "$(cat "$SRV_ERR")" \
        "recovered 4 records \(3 ADD, 1 DELETE\), 2 people"
}

case_stats() {
    rm -f "$J"
    start_server fine --journal "$J" --fsync always || return
    ask "$SRV_PORT" 'ADD A B 1 111-11-1111\n' >/dev/null
    local s
    s=$(ask "$SRV_PORT" 'STATS\n')
    expect_match "STATS: journal on, fsync always" "$s" $'journal on\nfsync always\n'
    expect_match "STATS: one record, one sync at least" "$s" \
        $'journal_records 1\njournal_bytes [0-9]+\njournal_fsyncs [1-9]'
    expect_match "STATS: group size, fsync p99, read-only" "$s" \
        $'journal_group_size_avg [0-9.]+\njournal_fsync_us_p99 [0-9]+\njournal_readonly 0'
    stop_server "$SRV_PID"
    start_server fine || return
    s=$(ask "$SRV_PORT" 'STATS\n')
    expect_match "STATS without a journal: journal off" "$s" $'journal off\n'
    stop_server "$SRV_PID"
}

# A thread per connection: a session whose record a round under way is to
# make durable hands its reply to the journal and never sleeps for it
# (server/journal/journal_reply.c): 20 connections of ADDs, every one
# answered, durable after a restart, and no wake-up counted. Replies over
# 256 bytes still sleep; "OK" does not.
case_held_replies() {
    local wakes
    rm -f "$J"
    start_server fine --journal "$J" --fsync always || return
    add_2000
    expect_match "threads: 2000 ADDs from 20 connections, all answered" \
        "$ANSWERED" '^2000,2000$'
    wakes=$(ask "$SRV_PORT" 'STATS\n' | awk '$1 == "journal_wakes" { print $2 }')
    expect_eq "threads: no session slept for durability (journal_wakes)" \
        "$wakes" 0
    restart fine --journal "$J" --fsync always || return
    expect_eq "threads: a restart finds every acknowledged ADD" \
        "$(ask "$SRV_PORT" 'COUNT\n')" "$ACKED"
    stop_server "$SRV_PID"
}

# A session that ends while the round's thread lets its held reply go:
# that thread is done with the reply before the session may free it (held
# is cleared last, journal_reply.c). A's ADD leads a round whose sync the
# test build makes slow (slow:200); B's ADD comes during it, so B's reply
# is held and sent by the next round's thread, which deliver:300 keeps in
# that window 300 ms after the send. B reads its OK and closes, so its
# session ends inside the window. Freeing too early is a use of freed
# memory that the sanitizers report (test-server-tsan.sh runs this suite
# under TSan: it fails with the flag cleared first); in every build the
# server goes on and both ADDs are durable.
case_settle_delivering() {
    local a b la lb
    rm -f "$J"
    SSN_TEST_JOURNAL_FAIL=slow:200,deliver:300 start_seams_server fine \
        --journal "$J" --fsync always || return
    exec {a}<>"/dev/tcp/127.0.0.1/$SRV_PORT" &&
        exec {b}<>"/dev/tcp/127.0.0.1/$SRV_PORT" || {
        not_ok "settle: two connections"; stop_server "$SRV_PID"; return; }
    printf 'ADD Leads Round 1 111-11-1111\n' >&"$a"
    sleep 0.05                  # A's round under way
    printf 'ADD Held Reply 1 111-11-1112\n' >&"$b"
    IFS= read -r -t 5 -u "$b" lb
    eval "exec $b>&-"           # inside the 300 ms
    IFS= read -r -t 5 -u "$a" la
    eval "exec $a>&-"
    expect_eq "settle: both replies arrive" "$la $lb" "OK OK"
    sleep 0.5                   # past the window
    check "settle: the server runs on" srv_running "$SRV_PID"
    restart fine --journal "$J" --fsync always || return
    expect_eq "settle: both ADDs are durable" "$(ask "$SRV_PORT" 'COUNT\n')" 2
    stop_server "$SRV_PID"
}

# ---- kill -9 under load ---------------------------------------------------

# always acknowledges what is synced, everysec what is written: a kill -9
# loses neither (the page cache outlives the process).
# everysec: a slow disk holds no reply. With every sync 1.5 s late (the
# test build's seam), an ADD every 250 ms for 3 s: with the sync in a
# round, as it was, the records appended during it waited for the round's
# end, up to 1.5 s; the flusher now syncs outside any round, and each ADD
# is written and answered at once. Both I/O models; the syncs happened
# (STATS journal_fsyncs).
case_everysec_slow_sync() {
    local io a i t0 ms worst fsyncs
    for io in threads events; do
        rm -f "$J"
        SSN_IO=$io SSN_TEST_JOURNAL_FAIL=slow:1500 start_seams_server buffered \
            --journal "$J" --fsync everysec || continue
        open_conn "$SRV_PORT"; a=$CONN
        worst=0
        for i in $(seq 1 12); do
            t0=$(now)
            send_line "$a" "ADD Slow$i Disk 30 123-45-$((6700 + i))"
            read_line "$a" 10
            ms=$(elapsed_ms "$t0")
            [[ $LINE == OK ]] || break
            (( ms > worst )) && worst=$ms
            sleep 0.25
        done
        expect_eq "$io: 12 ADDs answered while syncs are slow" "$i,$LINE" 12,OK
        check "$io: ... each within 500 ms, the slowest $worst ms" \
            test "$worst" -lt 500
        fsyncs=$(ask "$SRV_PORT" 'STATS\n' | awk '$1 == "journal_fsyncs" { print $2 }')
        check "$io: ... while everysec syncs ran (journal_fsyncs $fsyncs)" \
            test "${fsyncs:-0}" -ge 1
        close_conn "$a"
        stop_server "$SRV_PID"
        expect_eq "$io: a clean exit" "$STOP_RC" 0
    done
}

case_kill9() {
    kill9_cycles 2 "kill -9" "" fine --journal "$J" --fsync always
    kill9_cycles 2 "kill -9, everysec" "" buffered --journal "$J" --fsync everysec
}

# ---- recovery rules ----------------------------------------------------------

case_torn_tail() {
    rm -f "$J"
    start_server buffered --journal "$J" || return
    ask "$SRV_PORT" 'ADD A One 1 111-11-1111\nADD B Two 2 222-22-2222\n' >/dev/null
    stop_server "$SRV_PID"
    # Cut inside the second record (the file ends in the MARK a clean stop
    # writes after the records, 9 bytes).
    truncate -s $((16 + 2 * REC_A_ONE - 5)) "$J"
    start_server buffered --journal "$J" || return
    expect_eq "torn tail: the whole records are back" \
        "$(ask "$SRV_PORT" 'COUNT\n')" 1
    stop_server "$SRV_PID"         # the log is written by its own thread
    expect_match "torn tail: logged with its offset" "$(cat "$SRV_ERR")" \
        "torn tail at byte $((16 + REC_A_ONE)) "
}

case_damaged_middle() {
    rm -f "$J"
    start_server buffered --journal "$J" || return
    ask "$SRV_PORT" 'ADD A One 1 111-11-1111\nADD B Two 2 222-22-2222\nADD C Three 3 333-33-3333\n' >/dev/null
    stop_server "$SRV_PID"
    # The second record starts after the header (16) and the first record.
    local first=$REC_A_ONE off
    off=$((16 + first + 10))
    printf 'X' | dd of="$J" bs=1 seek=$off conv=notrunc status=none
    local size
    size=$(stat -c %s "$J")
    local err rc
    err=$(timeout 5 "$BIN/ssnserver-buffered" -p 0 --journal "$J" 2>&1 </dev/null); rc=$?
    expect_eq "damaged middle record: the server refuses to start" "$rc" 1
    expect_match "damaged middle record: the file, offset and way forward" \
        "$err" "$J: damaged record at byte $((16 + first)) .*--journal-truncate"
    expect_eq "damaged middle record: the file is untouched" \
        "$(stat -c %s "$J")" "$size"
    start_server buffered --journal "$J" --journal-truncate || return
    expect_eq "--journal-truncate keeps what is before the damage" \
        "$(ask "$SRV_PORT" 'COUNT\nFIND A One\n')" \
        "$(printf '1\n%s' "$(print_line A One 1 111-11-1111)")"
    stop_server "$SRV_PID"
}

case_foreign() {
    local f=$TEST_TMP/thesis.txt err rc
    printf 'chapter one\n' >"$f"
    chmod 600 "$f"              # else refused for its mode before it is read
    err=$(timeout 5 "$BIN/ssnserver-fine" -p 0 --journal "$f" 2>&1 </dev/null); rc=$?
    expect_eq "a foreign file: refused" "$rc" 1
    expect_match "a foreign file: says why" "$err" "not an ssnserver journal"
    expect_eq "a foreign file: never overwritten" "$(cat "$f")" "chapter one"
}

case_nolock() {
    local err rc
    err=$(timeout 5 "$BIN/ssnserver-nolock" -p 0 --journal "$J" 2>&1 </dev/null); rc=$?
    expect_eq "nolock refuses --journal (exit 2)" "$rc" 2
    expect_match "nolock says why" "$err" "nolock mode cannot keep a journal"
    err=$(timeout 5 "$BIN/ssnserver-fine" -p 0 --fsync sometimes 2>&1 </dev/null); rc=$?
    expect_eq "--fsync sometimes is refused (exit 2)" "$rc" 2
}

# ---- a full disk ---------------------------------------------------------------

# On a 1 MB tmpfs (tests/lib/journal.sh's mount_full), with the policy $1
# and the I/O model $2 (threads when not given):
# always reserves the journal's space by writing zeros, the others with
# fallocate (journal.c, journal_reserve_chunk); both halve a chunk the
# disk has no room for.
case_disk_full() {
    local mnt pol=$1 io=${2:-threads} l="disk full ($1${2:+, $2})"
    mount_full "$l" || return
    mnt=$FULL_MNT
    SSN_IO=$io start_server fine --journal "$mnt/j" --fsync "$pol" ||
        { unmount_full; return; }
    dd if=/dev/zero of="$mnt/filler" bs=4k status=none 2>/dev/null
    # More than the space reserved before the filler took the rest: the
    # journal reserves up to 1 MB ahead, half the disk here.
    local i n=25000 req=$TEST_TMP/full.req
    for ((i = 1; i <= n; i++)); do
        printf 'ADD f%d full_%d 1 111-11-1111\n' "$i" "$i"
    done >"$req"
    echo QUIT >>"$req"
    converse "$SRV_PORT" "$req" "$TEST_TMP/full.out" 20
    local oks errs other
    oks=$(grep -c '^OK$' "$TEST_TMP/full.out")
    errs=$(grep -c '^Error: journal write failed: No space left on device$' "$TEST_TMP/full.out")
    other=$(grep -vc -e '^OK$' -e '^Error: journal write failed' -e '^Bye$' \
            "$TEST_TMP/full.out")
    expect_eq "$l: every ADD answered, OK or the journal's error" \
        "$((oks + errs)):$other" "$n:0"
    check "$l: some ADDs refused ($oks OK, $errs refused)" test "$errs" -gt 0
    # The journal's space is reserved a chunk at a time, halved when the
    # disk has less: on this 1 MB disk it got some, so some ADDs went in.
    check "$l: some ADDs acknowledged before it filled" test "$oks" -gt 0
    expect_eq "$l: reads still work, and only acknowledged ADDs are there" \
        "$(ask "$SRV_PORT" 'COUNT\n')" "$oks"
    rm -f "$mnt/filler"
    expect_eq "$l: writes work again once there is room" \
        "$(ask "$SRV_PORT" 'ADD Again Ok 1 111-11-1111\n')" OK
    SSN_IO=$io restart fine --journal "$mnt/j" --fsync "$pol"
    expect_eq "$l: after a restart, exactly the acknowledged ADDs" \
        "$(ask "$SRV_PORT" 'COUNT\n')" "$((oks + 1))"
    stop_server "$SRV_PID"
    unmount_full
    check "$l: the tmpfs is unmounted" test ! -e "$mnt"
}

case_restart_keeps
case_stats
case_held_replies
case_settle_delivering
case_kill9
case_everysec_slow_sync
case_torn_tail
case_damaged_middle
case_foreign
case_nolock
case_disk_full always
case_disk_full everysec
case_disk_full everysec events
finish
