#!/bin/bash
# test-journal-torn.sh -- what a power loss leaves at the journal's end,
# and what it does not, over real TCP:
#
# - an out-of-order tail: the last round of records, never synced nor
#   acknowledged, reached the disk with its later block(s) and not its
#   first (the test seam SSN_TEST_JOURNAL_FAIL=torn:N of the test build,
#   server/journal/journal_seams.c, then SIGKILL). The installed server
#   starts by itself, logs the bytes it dropped and keeps every
#   acknowledged record: with --fsync always (threads, and buffered with
#   --io events) and everysec;
# - damage to what was durable: a byte flipped in an early record of a
#   file with several synced rounds is refused and named (the byte, and
#   the later record that says it had been synced), the file untouched;
#   --journal-truncate is the way out. A bad last record after a kill -9
#   is a torn tail, as ever; after a clean stop, whose MARK claims every
#   record durable, it is refused;
# - a version 1 journal (tests/fixtures/v1.journal, written by the server
#   of commit 728cda7: ADD Ada Lovelace, Alan Turing, Grace Hopper, DELETE
#   Alan Turing, ADD Edsger Dijkstra, then SIGTERM) replays, takes new
#   records in version 1, and COMPACT rewrites it as version 2;
# - a journal whose names ADD refuses now (tests/fixtures/pre-utf8.journal,
#   written by the server of commit 7dfd830^: ADD Ann<9B>2J Lee<9B>31m,
#   Bob Roe, Eve Caf<E9>, then SIGTERM; a lone 0x9B is an 8-bit CSI)
#   replays whole; PRINT and FIND show those bytes as '?' (as TREE's
#   drawing does, common/rbtree_dot.c), and COMPACT keeps them as they were;
# - a file cut inside its 16-byte header (at 8 bytes) starts empty, with
#   a warning and the header written again.
#
# The requests go over connections this shell holds (/dev/tcp), one at a
# time (each ADD a round of its own), as in test-journal-faults.sh.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/journal.sh"

trap '' PIPE                    # a request to a closed connection: EPIPE

J=$TEST_TMP/people.journal

# The K-th person, and the request that adds it.
person() { echo "P$1 Torn $(($1 % 100)) $((100 + $1 % 900))-22-3333"; }

# nonzero_after FILE OFFSET: how many bytes after OFFSET are not zeros.
nonzero_after() {
    tail -c +$(($2 + 1)) "$1" | tr -d '\0' | wc -c
}

# byte_at FILE OFFSET: the byte there, in decimal.
byte_at() {
    od -A n -t u1 -j "$2" -N 1 "$1" | tr -d ' '
}

# torn_round LABEL MODE ARGS...: on a seams server armed with torn:3, two
# ADDs are acknowledged (rounds 1 and 2), then 40 ADDs sent at once make
# round 3, which the seam writes out of order (its first block left as
# zeros, the rest written) before killing the server. The file then holds
# non-zero bytes after its first bad record: the installed server starts
# on it without --journal-truncate, says what it dropped, and has exactly
# the acknowledged ADDs.
torn_round() {
    local label=$1 end i batch="" got
    shift
    rm -f "$J"
    SSN_TEST_JOURNAL_FAIL=torn:3 start_seams_server "$@" --journal "$J" ||
        return
    open_conn "$SRV_PORT"
    say "ADD $(person 1)" "ADD $(person 2)"
    expect_eq "$label: the two ADDs before the tear are acknowledged" \
        "$T" $'OK\nOK'
    # journal_size: the end of what was written, where round 3 begins.
    stats_field journal_size
    end=$R
    for ((i = 11; i <= 50; i++)); do
        batch+="ADD $(person "$i")"$'\n'
    done
    printf '%s' "$batch" >&"$CONN"
    reply
    close_conn "$CONN"
    expect_eq "$label: round 3 is never acknowledged: the connection closes" \
        "$R" "(closed)"
    check "$label: the seam killed the server" srv_wait_gone "$SRV_PID" 5
    stop_server "$SRV_PID"
    expect_eq "$label: killed by SIGKILL (exit 137)" "$STOP_RC" 137
    expect_eq "$label: the round's first byte, at $end, is still a zero" \
        "$(byte_at "$J" "$end")" 0
    check "$label: its later bytes reached the file (out of order)" \
        test "$(nonzero_after "$J" "$end")" -gt 0

    start_server "$@" --journal "$J" || return
    open_conn "$SRV_PORT"
    say COUNT "FIND P1 Torn" "FIND P2 Torn" "FIND P11 Torn" "FIND P50 Torn"
    expect_eq "$label: restarted without --journal-truncate; every acknowledged ADD, no more" \
        "$T" "$(echo 2; print_line $(person 1); print_line $(person 2)
                echo "Error: P11 Torn not found"; echo "Error: P50 Torn not found")"
    say "ADD $(person 3)" CHECK QUIT
    close_conn "$CONN"
    expect_match "$label: writable, CHECK holds" "$T" \
        $'^OK\nOK 3 entries, all invariants hold\nBye$'
    stop_server "$SRV_PID"
    got=$(cat "$SRV_ERR")
    # How many of round 3's records lie whole past its skipped block
    # depends on how many ADDs the round took: with events, those of the
    # worker's first time slice (200 us), which a loaded machine may end
    # after a few, so that all past the block is one record's tail.
    expect_match "$label: the log names the tear and the bytes dropped" \
        "$got" "journal $J: torn tail at byte $end cut: [1-9][0-9]* bytes of records \([0-9][0-9]* whole among them\)"
    # Once more: the cut is kept, the ADD after it too.
    start_server "$@" --journal "$J" || return
    expect_eq "$label: a second restart has the three" \
        "$(ask "$SRV_PORT" 'COUNT\n')" 3
    stop_server "$SRV_PID"
}

case_torn_tail() {
    torn_round "fine, always" fine --fsync always
    SSN_IO=events torn_round "buffered events, always" buffered \
        --fsync always
    torn_round "fine, everysec" fine --fsync everysec
}

# flip FILE OFFSET: one byte there XORed with 0x20 (a letter's case).
flip() {
    local b
    b=$(byte_at "$1" "$2")
    printf "$(printf '\\%03o' $((b ^ 0x20)))" |
        dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# refused LABEL WANT ARGS...: the installed server refuses to start on $J
# (exit 1), saying WANT (an ERE), and leaves the file as it was.
refused() {
    local label=$1 want=$2 err rc size
    shift 2
    size=$(stat -c %s "$J")
    err=$(timeout 5 "$BIN/ssnserver-fine" -p 0 --journal "$J" "$@" 2>&1 \
          </dev/null); rc=$?
    expect_eq "$label: the server refuses to start (exit 1)" "$rc" 1
    expect_match "$label: it names the byte, the proof and the way out" \
        "$err" "$want"
    expect_eq "$label: the file is untouched" "$(stat -c %s "$J")" "$size"
}

# Five ADDs, each a round synced before the next (--fsync always), then
# kill -9: the records after the second say it had been durable.
case_damage_refused() {
    local ends=() k
    rm -f "$J"
    start_server fine --journal "$J" --fsync always || return
    open_conn "$SRV_PORT"
    for k in 1 2 3 4 5; do
        say "ADD $(person $k)"
        stats_field journal_size
        ends+=("$R")
    done
    close_conn "$CONN"
    stop_server "$SRV_PID" KILL
    cp "$J" "$TEST_TMP/five.journal"
    # The second record begins where the first ends; its name's bytes.
    flip "$J" $((ends[0] + 10))
    refused "damage before a later round's claim" \
        "$J: damaged record at byte ${ends[0]} \(bad length, checksum or contents\), in bytes that had been durable: the record at byte ${ends[1]} was appended when the file was synced up to byte ${ends[1]}.* 1 records before it are good\. Start with --journal-truncate"
    start_server fine --journal "$J" --fsync always --journal-truncate ||
        return
    expect_eq "damage, --journal-truncate: the record before it is kept" \
        "$(ask "$SRV_PORT" 'COUNT\nFIND P1 Torn\n')" \
        "$(echo 1; print_line $(person 1))"
    stop_server "$SRV_PID"

    # The last record: after kill -9 no record claims it; a torn tail.
    cp "$TEST_TMP/five.journal" "$J"
    flip "$J" $((ends[3] + 10))
    start_server fine --journal "$J" --fsync always || return
    expect_eq "a bad last record after kill -9: a torn tail, cut" \
        "$(ask "$SRV_PORT" 'COUNT\n')" 4
    stop_server "$SRV_PID"

    # After a clean stop, the MARK claims the last record durable too.
    cp "$TEST_TMP/five.journal" "$J"
    start_server fine --journal "$J" --fsync always || return
    stop_server "$SRV_PID"
    expect_eq "a clean stop adds a 9-byte MARK after the records" \
        "$(stat -c %s "$J")" $((ends[4] + 9))
    flip "$J" $((ends[3] + 10))
    refused "a bad last record after a clean stop" \
        "damaged record at byte ${ends[3]} .*the record at byte ${ends[4]} was appended when the file was synced up to byte ${ends[4]}"
}

# The version 1 fixture: replayed; new records in version 1 until
# COMPACT, which writes version 2; the people the same throughout.
case_v1() {
    local digest want
    cp tests/fixtures/v1.journal "$J"
    chmod 600 "$J"
    expect_eq "v1 fixture: version 1 in its header" "$(byte_at "$J" 8)" 1
    start_server fine --journal "$J" --fsync always || return
    want=$(echo 3; print_line Ada Lovelace 36 123-45-6789
           echo "Error: Alan Turing not found"; print_line Edsger Dijkstra 72 444-55-6666)
    expect_eq "v1 fixture: replayed" \
        "$(ask "$SRV_PORT" 'COUNT\nFIND Ada Lovelace\nFIND Alan Turing\nFIND Edsger Dijkstra\n')" \
        "$want"
    expect_eq "v1: an ADD appended" \
        "$(ask "$SRV_PORT" 'ADD Barbara Liskov 40 555-66-7777\n')" OK
    restart fine --journal "$J" --fsync always || return
    expect_eq "v1: still version 1 after a restart" "$(byte_at "$J" 8)" 1
    expect_eq "v1: the ADD appended in version 1 replays" \
        "$(ask "$SRV_PORT" 'COUNT\nFIND Barbara Liskov\n')" \
        "$(echo 4; print_line Barbara Liskov 40 555-66-7777)"
    digest=$(ask "$SRV_PORT" 'DIGEST\n')
    expect_eq "v1: COMPACT" "$(ask "$SRV_PORT" 'COMPACT\n')" OK
    expect_eq "v1: after COMPACT the file is version 2" "$(byte_at "$J" 8)" 2
    expect_eq "v1: an ADD after COMPACT, in version 2" \
        "$(ask "$SRV_PORT" 'ADD Frances Allen 50 666-77-8888\n')" OK
    restart fine --journal "$J" --fsync always || return
    expect_eq "v1: compacted, restarted: the same people and the ADD after" \
        "$(ask "$SRV_PORT" 'DELETE Frances Allen\nDIGEST\n')" \
        "$(echo OK; echo "$digest")"
    stop_server "$SRV_PID"
    expect_match "v1: the log said format 1 until the compaction" \
        "$(cat "$TEST_TMP"/server*.err)" "format 1 until the next compaction"
}

# A journal from before ADD took UTF-8 only: its people are kept, and no
# reply carries the bytes a terminal could act on.
case_pre_utf8() {
    local out
    cp tests/fixtures/pre-utf8.journal "$J"
    chmod 600 "$J"
    start_server buffered --journal "$J" || return
    out=$(ask "$SRV_PORT" 'COUNT\nPRINT\nFIND Ann\x9b2J Lee\x9b31m\nTREE 2\n')
    expect_eq "pre-UTF-8 journal: all three replayed" "$(head -1 <<<"$out")" 3
    check "pre-UTF-8 journal: no 0x9B nor 0xE9 in PRINT, FIND or TREE" \
        bash -c '! LC_ALL=C grep -q $'"'"'[\x9b\xe9]'"'"' <<<"$1"' _ "$out"
    expect_eq "pre-UTF-8 journal: PRINT shows them as '?', in its columns" \
        "$(grep -- ' -- ' <<<"$out" | head -3)" \
        "$(print_line Eve 'Caf?' 51 222-33-4444; print_line 'Ann?2J' 'Lee?31m' 40 123-45-6789
           print_line Bob Roe 33 111-22-3333)"
    expect_match "pre-UTF-8 journal: FIND by the stored bytes finds it" \
        "$(sed -n 7p <<<"$out")" '^Lee\?31m, Ann\?2J +-- 123-45-6789   40$'
    expect_match "pre-UTF-8 journal: TREE's label too" "$out" 'label="Lee\?31m,\\nAnn\?2J"'
    expect_eq "pre-UTF-8 journal: COMPACT" "$(ask "$SRV_PORT" 'COMPACT\n')" OK
    stop_server "$SRV_PID"
    check "pre-UTF-8 journal: COMPACT kept the bytes as they were" \
        bash -c 'LC_ALL=C grep -q $'"'"'Ann\x9b2J'"'"' "$1"' _ "$J"
}

# A header cut at 8 bytes: nothing was ever in the file.
case_header_cut() {
    rm -f "$J"
    start_server fine --journal "$J" --fsync always || return
    ask "$SRV_PORT" "ADD $(person 1)\n" >/dev/null
    stop_server "$SRV_PID"
    truncate -s 8 "$J"
    start_server fine --journal "$J" --fsync always || return
    expect_eq "a header cut at 8 bytes: the server starts, empty" \
        "$(ask "$SRV_PORT" 'COUNT\n')" 0
    expect_eq "header cut: the header is whole again, version 2" \
        "$(head -c 16 "$J" | od -A n -t x1 | tr -d ' \n' | head -c 24)" \
        "53534e4a4f55524e02000000"
    expect_eq "header cut: writable" "$(ask "$SRV_PORT" "ADD $(person 2)\n")" OK
    restart fine --journal "$J" --fsync always || return
    expect_eq "header cut: the ADD after it replays" \
        "$(ask "$SRV_PORT" 'COUNT\n')" 1
    stop_server "$SRV_PID"
    expect_match "header cut: logged as a warning" \
        "$(cat "$TEST_TMP"/server*.err)" \
        "warn  journal $J: 8 bytes, a header cut short .*starting empty"
}

case_torn_tail
case_damage_refused
case_v1
case_pre_utf8
case_header_cut
finish
