#!/bin/bash
# test-journal-owner.sh -- one server per journal, and files that hold
# secrets kept private (server/journal/journal_owner.c): a second server on
# a journal in use refuses to start (exit 1, naming the file and the
# owner's PID) and changes nothing, while the first keeps working; the
# same after the first COMPACTed; a restart works once the first is
# stopped, and after kill -9 of it; a second server started in the middle
# of a compaction leaves its PATH.compact alone (the test build's slow:N
# seam holds the compaction open); a journal or a --password-file that
# group or others have access to is refused with the chmod that fixes it;
# a journal reached through a symbolic link is compacted in its target's
# place, the link left a link.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/journal.sh"

umask 077                       # what this script writes is private
J=$TEST_TMP/people.journal

# refused LABEL ERE ARGS...: an installed buffered server started with ARGS
# must not start: exit status 1, and one line on stderr matching ERE. The
# running server's SRV_PID and SRV_PORT are left as they were.
refused() {
    local label=$1 ere=$2 err=$TEST_TMP/refused.err
    local pid=$SRV_PID port=$SRV_PORT started=0
    shift 2
    if srv_start "$TEST_TMP/refused.out" "$err" 5 \
            "$BIN/ssnserver-buffered" -p 0 "$@"; then
        srv_stop "$SRV_PID"
        started=1
    fi
    SRV_PID=$pid SRV_PORT=$port
    if ((started)); then
        not_ok "$label: refuses to start"
        return 1
    fi
    expect_eq "$label: exit status 1" "$SRV_RC" 1
    expect_match "$label: one line that says why" "$(cat "$err")" "^$ere$"
}

# second_refused LABEL OWNER_PID FILE: a second server on FILE is refused,
# naming FILE and the owner, and leaves the journal's bytes as they were.
second_refused() {
    local before
    before=$(sha256sum <"$3")
    refused "$1: a second server" \
        "ssnserver: --journal: $3 is in use by another server, pid $2 \(one journal, one server\)" \
        --journal "$3" --fsync always
    expect_eq "$1: the second server changed nothing in the journal" \
        "$(sha256sum <"$3")" "$before"
}

# load_churn PORT N: N people added, then all but every fifth deleted.
load_churn() {
    awk -v n="$2" 'BEGIN {
        for (i = 1; i <= n; i++)
            printf "ADD f%d churn%d %d %03d-%02d-%04d\n", i, i, i % 150,
                   i % 1000, i % 100, i % 10000
        for (i = 1; i <= n; i++)
            if (i % 5) printf "DELETE f%d churn%d\n", i, i
        print "QUIT"
    }' >"$TEST_TMP/churn.req"
    converse "$1" "$TEST_TMP/churn.req" "$TEST_TMP/churn.out" 20
}

# Two servers on one journal: the first started, then stopped and started
# again, after a COMPACT, after kill -9. Each time a second one is refused
# and the first goes on.
case_two_servers() {
    local run mode io label
    for run in buffered fine:events; do
        mode=${run%:*} io=""
        [[ $run == *:events ]] && io=events
        label="$mode${io:+ events}"
        rm -f "$J"
        SSN_IO=$io start_server "$mode" --journal "$J" --fsync always ||
            continue
        expect_eq "$label: the first server acknowledges an ADD" \
            "$(ask "$SRV_PORT" 'ADD A One 1 111-11-1111\n')" OK
        second_refused "$label" "$SRV_PID" "$J"
        expect_eq "$label: the first keeps working" \
            "$(ask "$SRV_PORT" 'ADD B Two 2 222-22-2222\nCOUNT\n')" $'OK\n2'

        SSN_IO=$io restart "$mode" --journal "$J" --fsync always || continue
        expect_eq "$label: once the first is stopped, a restart finds both" \
            "$(ask "$SRV_PORT" 'FIND A One\nFIND B Two\n')" \
            "$(print_line A One 1 111-11-1111; print_line B Two 2 222-22-2222)"

        expect_eq "$label: COMPACT" \
            "$(ask "$SRV_PORT" 'ADD C Three 3 333-33-3333\nDELETE A One\nCOMPACT\n')" \
            $'OK\nOK\nOK'
        second_refused "$label, after a COMPACT" "$SRV_PID" "$J"
        expect_eq "$label, after a COMPACT: the first keeps working" \
            "$(ask "$SRV_PORT" 'ADD D Four 4 444-44-4444\nCOMPACT\nADD E Five 5 555-55-5555\n')" \
            $'OK\nOK\nOK'
        second_refused "$label, after two COMPACTs" "$SRV_PID" "$J"
        SSN_IO=$io restart "$mode" --journal "$J" --fsync always || continue
        expect_eq "$label, after COMPACTs: a restart finds every person" \
            "$(ask "$SRV_PORT" 'COUNT\nFIND A One\nFIND E Five\n')" \
            "$(printf '4\nError: A One not found\n'; print_line E Five 5 555-55-5555)"

        expect_eq "$label: ADD, then kill -9" \
            "$(ask "$SRV_PORT" 'ADD F Six 6 666-66-6666\n')" OK
        stop_server "$SRV_PID" KILL
        SSN_IO=$io start_server "$mode" --journal "$J" --fsync always ||
            continue
        expect_eq "$label: after kill -9 of the first, a restart works" \
            "$(ask "$SRV_PORT" 'COUNT\nFIND F Six\n')" \
            "$(printf '5\n'; print_line F Six 6 666-66-6666)"
        second_refused "$label, after kill -9 and a restart" "$SRV_PID" "$J"
        stop_server "$SRV_PID"
    done
}

# A second server started while the first is in the middle of a compaction
# (its snapshot's sync made 3 s slow by the test build's seam) is
# refused, and the first's PATH.compact is still there, the same file; the
# compaction ends with OK and a restart finds the same store.
case_during_compaction() {
    local digest inode t
    rm -f "$J" "$J.compact"
    start_server buffered --journal "$J" --fsync always || return
    for ((t = 1; t <= 300; t++)); do
        printf 'ADD p%d During %d %03d-11-1111\n' "$t" $((t % 100)) $((t % 1000))
    done >"$TEST_TMP/during.req"
    echo QUIT >>"$TEST_TMP/during.req"
    converse "$SRV_PORT" "$TEST_TMP/during.req" "$TEST_TMP/during.out" 20
    digest=$(ask "$SRV_PORT" 'DIGEST\n')
    stop_server "$SRV_PID"
    # --fsync no: the seam slows only the compaction's sync then.
    SSN_TEST_JOURNAL_FAIL=slow:3000 start_seams_server buffered \
        --journal "$J" --fsync no || return
    local owner=$SRV_PID
    open_conn "$SRV_PORT"
    send_line "$CONN" COMPACT
    for ((t = 0; t < 100; t++)); do
        [[ -e $J.compact ]] && break
        sleep 0.01
    done
    inode=$(stat -c %i "$J.compact" 2>/dev/null)
    check "during a compaction: $J.compact is being written" test -n "$inode"
    second_refused "during a compaction" "$owner" "$J"
    expect_eq "during a compaction: the second server left $J.compact alone" \
        "$(stat -c %i "$J.compact" 2>/dev/null)" "$inode"
    read_line "$CONN" 10
    expect_eq "during a compaction: the first's COMPACT ends with OK" \
        "$LINE" OK
    close_conn "$CONN"
    check "during a compaction: no $J.compact is left" test ! -e "$J.compact"
    restart buffered --journal "$J" --fsync always || return
    expect_eq "during a compaction: a restart finds the same store" \
        "$(ask "$SRV_PORT" 'DIGEST\nCOUNT\n')" "$(printf '%s\n300' "$digest")"
    stop_server "$SRV_PID"
}

# The journal and the password file hold secrets: group or others must
# have no access. A new journal is 0600 whatever the umask, and so is the
# file a COMPACT puts in its place.
case_modes() {
    local before
    rm -f "$J"
    umask 000
    start_server buffered --journal "$J" --fsync always
    local rc=$?
    umask 077
    ((rc == 0)) || return
    expect_eq "a new journal is made 0600, even with umask 000" \
        "$(stat -c %a "$J")" 600
    expect_eq "a COMPACTed journal is 0600 too" \
        "$(ask "$SRV_PORT" 'ADD A One 1 111-11-1111\nCOMPACT\n')" $'OK\nOK'
    expect_eq "a COMPACTed journal is 0600 too: its mode" \
        "$(stat -c %a "$J")" 600
    stop_server "$SRV_PID"
    before=$(sha256sum <"$J")
    chmod 644 "$J"
    refused "a journal others can read (0644)" \
        "ssnserver: --journal: permissions 0644 for $J are too open: group or others have access, and a journal holds SSNs; fix it with: chmod 600 $J" \
        --journal "$J"
    chmod 620 "$J"
    refused "a journal the group can write (0620)" \
        "ssnserver: --journal: permissions 0620 for $J are too open: .*chmod 600 $J" \
        --journal "$J"
    expect_eq "a refused journal is left as it was" "$(sha256sum <"$J")" "$before"
    chmod 600 "$J"
    if start_server buffered --journal "$J"; then
        expect_eq "after chmod 600 the journal is accepted" \
            "$(ask "$SRV_PORT" 'FIND A One\n')" \
            "$(print_line A One 1 111-11-1111)"
        stop_server "$SRV_PID"
    fi

    local pw=$TEST_TMP/password
    printf 'Pass-Word.9\n' >"$pw"
    chmod 644 "$pw"
    refused "a password file others can read (0644)" \
        "ssnserver: --password-file: permissions 0644 for $pw are too open: group or others have access; fix it with: chmod 600 $pw" \
        --password-file "$pw"
    chmod 640 "$pw"
    refused "a password file the group can read (0640)" \
        "ssnserver: --password-file: permissions 0640 for $pw are too open: .*chmod 600 $pw" \
        --password-file "$pw"
    chmod 600 "$pw"
    if start_server buffered --password-file "$pw"; then
        expect_eq "after chmod 600 the password file is accepted" \
            "$(ask "$SRV_PORT" 'AUTH Pass-Word.9\nCOUNT\n')" $'OK\n0'
        stop_server "$SRV_PID"
    fi
}

# A journal reached through a symbolic link (relative, into another
# directory): COMPACT replaces the target, in its directory, and the link
# stays a link to it; a second server by the target's own name is refused;
# a restart through the link finds every person.
case_symlink() {
    local dir=$TEST_TMP/data link=$TEST_TMP/link.journal target digest
    target=$dir/people.journal
    mkdir -p "$dir"
    rm -f "$target" "$link"
    ln -s data/people.journal "$link"
    start_server buffered --journal "$link" --fsync always || return
    load_churn "$SRV_PORT" 500
    digest=$(ask "$SRV_PORT" 'DIGEST\n')
    local before after
    before=$(stat_field "$SRV_PORT" journal_size)
    expect_eq "through a symbolic link: COMPACT answers OK" \
        "$(ask "$SRV_PORT" 'COMPACT\n')" OK
    after=$(stat_field "$SRV_PORT" journal_size)
    second_refused "through a symbolic link, the target by its own name" \
        "$SRV_PID" "$target"
    stop_server "$SRV_PID"
    check "through a symbolic link: the link is still a link" test -L "$link"
    expect_eq "through a symbolic link: to the same target" \
        "$(readlink "$link")" data/people.journal
    check "through a symbolic link: the target is a regular file" \
        test -f "$target" -a ! -L "$target"
    # The compacted journal, and the mark a clean stop appends (9 bytes).
    local size
    size=$(stat -c %s "$target")
    check "through a symbolic link: the target is the compacted journal ($size bytes; $after after COMPACT, $before before)" \
        test "$size" -ge "$after" -a "$size" -le $((after + 9)) -a "$after" -lt "$before"
    expect_eq "through a symbolic link: no new file left beside the link or the target" \
        "$(ls "$TEST_TMP" "$dir" | grep -c '\.compact$')" 0
    start_server buffered --journal "$link" --fsync always || return
    expect_eq "through a symbolic link: a restart finds every person" \
        "$(ask "$SRV_PORT" 'DIGEST\nCOUNT\nCHECK\n')" \
        "$(printf '%s\n100\nOK 100 entries, all invariants hold' "$digest")"
    stop_server "$SRV_PID"
}

# The journal's file removed, replaced or cut short under a running server
# (journal_owner_still, after each sync): with --fsync always the next ADD
# is never acknowledged (its connection closes), with everysec the server
# is read-only within a second; either way it says so in STATS and the
# log, and its COMPACT never renames over the name, which a second server
# may have taken meanwhile. With no, which never syncs while it runs, the
# stop's sync notices and logs it.
case_file_gone() {
    local how first second
    for how in removed replaced cut; do
        rm -f "$J" "$J.bak"
        start_server buffered --journal "$J" --fsync always || continue
        expect_eq "$how: an ADD before" \
            "$(ask "$SRV_PORT" 'ADD A One 1 111-11-1111\n')" OK
        case $how in
        removed) rm -f "$J" ;;
        replaced) cp -p "$J" "$J.bak" && mv "$J.bak" "$J" ;;
        cut) truncate -s 20 "$J" ;;
        esac
        expect_eq "always, file $how: the next ADD is not acknowledged" \
            "$(ask "$SRV_PORT" 'ADD B Two 2 222-22-2222\n')" ""
        expect_eq "always, file $how: STATS journal_readonly" \
            "$(stat_field "$SRV_PORT" journal_readonly)" 1
        for _ in 1 2 3 4 5 6 7 8 9 10; do      # the flusher logs it
            grep -qE 'journal file was' "$SRV_ERR" && break
            sleep 0.1
        done
        expect_match "always, file $how: the log says what happened" \
            "$(cat "$SRV_ERR")" "journal file was (removed or replaced|cut short) while the server ran"
        if [[ $how == removed ]]; then
            first=$SRV_PID second=$SRV_PORT
            start_server buffered --journal "$J" --fsync always || continue
            expect_eq "removed: a second server on the name acknowledges" \
                "$(ask "$SRV_PORT" 'ADD C Three 3 333-33-3333\n')" OK
            expect_match "removed: the first's COMPACT is refused" \
                "$(ask "$second" 'COMPACT\n')" "^Error: "
            stop_server "$first"
            restart buffered --journal "$J" --fsync always || continue
            expect_eq "removed: the second's journal survived the first" \
                "$(ask "$SRV_PORT" 'COUNT\nFIND C Three\n')" \
                "$(printf '1\n'; print_line C Three 3 333-33-3333)"
        fi
        stop_server "$SRV_PID"
    done
    rm -f "$J"
    start_server buffered --journal "$J" --fsync everysec || return
    ask "$SRV_PORT" 'ADD A One 1 111-11-1111\n' >/dev/null
    rm -f "$J"
    sleep 1.3                   # the flusher's once-a-second sync
    expect_eq "everysec, file removed: read-only within a second" \
        "$(ask "$SRV_PORT" 'ADD B Two 2 222-22-2222\n')" \
        "Error: read-only: the journal file was removed or replaced while the server ran: Stale file handle"
    stop_server "$SRV_PID"
    # no: a write only, no sync to check at; the stop's sync notices
    rm -f "$J"
    start_server buffered --journal "$J" --fsync no || return
    ask "$SRV_PORT" 'ADD A One 1 111-11-1111\n' >/dev/null
    rm -f "$J"
    sleep 1.3
    expect_eq "no, file removed: still acknowledged while it runs" \
        "$(ask "$SRV_PORT" 'ADD B Two 2 222-22-2222\n')" OK
    check "no, file removed: nothing logged before the stop" \
        bash -c '! grep -q "journal file was" "$1"' _ "$SRV_ERR"
    stop_server "$SRV_PID"
    expect_match "no, file removed: the stop says what happened" \
        "$(cat "$SRV_ERR")" "journal file was removed or replaced while the server ran"
}

# Names a journal may not have: one ending in .compact (another journal's
# compaction file), one too long for its own; PATH.compact that is another
# server's journal (a hard link's name for it) refuses a start and fails a
# COMPACT; a symbolic link planted at PATH.compact is never written through.
case_compact_names() {
    local long
    refused ".compact" "ssnserver: --journal: $TEST_TMP/x\.compact: a journal's name may not end in \.compact, the name a compaction gives its new file" \
        --journal "$TEST_TMP/x.compact"
    long=$TEST_TMP/$(printf 'j%.0s' {1..250})
    refused "a 250-byte name" "ssnserver: --journal: .*: a journal's file name may be at most 247 bytes, to leave room for its compaction file's \.compact" \
        --journal "$long"
    check "a 250-byte name: no file made" test ! -e "$long"

    rm -f "$J" "$J.compact" "$TEST_TMP/alias"
    mkdir -p "$TEST_TMP/other"
    echo "config=1" >"$TEST_TMP/other/app.conf"
    chmod 644 "$TEST_TMP/other/app.conf"
    start_server buffered --journal "$J" --fsync always || return
    ask "$SRV_PORT" 'ADD A One 1 111-11-1111\n' >/dev/null
    ln -s other/app.conf "$J.compact"
    expect_eq "a link planted at PATH.compact: COMPACT" \
        "$(ask "$SRV_PORT" 'COMPACT\n')" OK
    expect_eq "... the link's target is untouched" \
        "$(cat "$TEST_TMP/other/app.conf")" "config=1"
    check "... the journal is a regular file, 0600" \
        test "$(stat -c %F:%a "$J")" = "regular file:600"

    # PATH.compact that is another server's journal, by a hard link.
    local first=$SRV_PID port=$SRV_PORT
    : >"$J.compact" && ln "$J.compact" "$TEST_TMP/alias"
    start_server buffered --journal "$TEST_TMP/alias" --fsync always ||
        return
    expect_eq "PATH.compact another server's journal: it acknowledges" \
        "$(ask "$SRV_PORT" 'ADD B Two 2 222-22-2222\n')" OK
    expect_eq "... the first's COMPACT leaves it alone" \
        "$(ask "$port" 'COMPACT\n')" \
        "Error: compaction failed: the new file's name is another server's journal: Device or resource busy"
    stop_server "$first"
    refused "... and a start on PATH is refused" \
        "ssnserver: --journal: $J\.compact is another server's journal, and this one's compactions need that name: give one of them another" \
        --journal "$J"
    restart buffered --journal "$TEST_TMP/alias" || return
    expect_eq "... whose records are all there" \
        "$(ask "$SRV_PORT" 'COUNT\n')" 1
    stop_server "$SRV_PID"
    rm -f "$J.compact" "$TEST_TMP/alias"
}

# The trace and the log never write into a journal: TRACE START refuses a
# --trace-file that is one, --trace and --log-file naming one refuse to
# start; the journal is left whole.
case_not_into_journal() {
    local t=$TEST_TMP/t.json
    rm -f "$J" "$t"
    start_server buffered --journal "$J" --fsync always --trace-file "$t" ||
        return
    ask "$SRV_PORT" 'ADD A One 1 111-11-1111\n' >/dev/null
    ln -f "$J" "$t"                     # the same file, after the start
    expect_eq "--trace-file become the journal: TRACE START refuses" \
        "$(ask "$SRV_PORT" 'TRACE START\n')" \
        "Error: the trace file is a journal: not overwritten"
    rm -f "$t"
    printf 'the notes of a lesson\n' >"$t"
    expect_eq "--trace-file become another file: TRACE START refuses" \
        "$(ask "$SRV_PORT" 'TRACE START\n')" \
        "Error: the trace file holds something that is no trace: not overwritten"
    expect_eq "... the file untouched" "$(cat "$t")" "the notes of a lesson"
    rm -f "$t"
    expect_eq "gone again: TRACE START makes it" \
        "$(ask "$SRV_PORT" 'TRACE START\nTRACE STOP\n' | head -1)" OK
    stop_server "$SRV_PID"
    mkdir -p "$TEST_TMP/gone"
    start_server buffered --trace-file "$TEST_TMP/gone/t.json" || return
    rmdir "$TEST_TMP/gone"
    expect_eq "the trace file's directory removed: TRACE START says so" \
        "$(ask "$SRV_PORT" 'TRACE START\n')" \
        "Error: cannot write the trace file: No such file or directory"
    stop_server "$SRV_PID"
    refused "--trace naming the journal" \
        "ssnserver: --trace: cannot write $J: it is a journal" \
        --journal "$TEST_TMP/other.journal" --trace "$J"
    refused "--log-file naming the journal" \
        "ssnserver: cannot open log $J: it is a journal \(ssnserver --journal\): not written to" \
        --log-file "$J"
    start_server buffered --journal "$J" || return
    expect_eq "... the journal whole after all three" \
        "$(ask "$SRV_PORT" 'COUNT\n')" 1
    stop_server "$SRV_PID"
}

case_two_servers
case_during_compaction
case_modes
case_symlink
case_file_gone
case_compact_names
case_not_into_journal
finish
