#!/bin/bash
# test-seams.sh -- the journal's test seams (server/journal/journal_seams.h)
# stay out of the servers that ship: no server of $BIN holds an SSN_TEST_
# string, make install takes nothing from the test build, and an installed
# server started with the seams' variables set ignores them. The test build
# ($SEAMS_BIN) holds them, so the first check can see what it looks for.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

J=$TEST_TMP/people.journal

case_strings() {
    local mode f
    for mode in serial nolock coarse fine buffered; do
        f=$BIN/ssnserver-$mode
        if [[ ! -f $f ]]; then
            not_ok "$f exists"
            continue
        fi
        check "$f holds no SSN_TEST_ string" \
            bash -c '! grep -qa SSN_TEST_ "$1"' _ "$f"
    done
    check "the test build $SEAMS_BIN/ssnserver-fine holds them (the check can see them)" \
        grep -qa SSN_TEST_JOURNAL_FAIL "$SEAMS_BIN/ssnserver-fine"
}

# make install's programs (a dry run, so only for the plain build): all
# from $BIN, none from the test build.
case_install() {
    local line
    if [[ $BIN != bin ]]; then
        ok "# SKIP make install's programs: plain build only (BIN=$BIN)"
        return
    fi
    line=$(make -s -n install DESTDIR="$TEST_TMP/stage" 2>/dev/null |
           grep -E '^install -m 0755 ')
    expect_match "make install installs the servers of bin/" "$line" \
        ' bin/ssnserver-buffered '
    check "make install installs nothing of the test build" \
        bash -c '! grep -q seams <<<"$1"' _ "$line"
}

# An installed server with both variables set: the ADDs are acknowledged,
# COMPACT finishes (no crash), and the log says nothing of a seam.
case_ignored() {
    rm -f "$J"
    SSN_TEST_JOURNAL_FAIL=sync:1 SSN_TEST_COMPACT_CRASH=snapshot \
        start_server fine --journal "$J" --fsync always || return
    expect_eq "installed build: SSN_TEST_JOURNAL_FAIL=sync:1 fails no sync" \
        "$(converse_str "$SRV_PORT" 'ADD Seam Less 1 111-11-1111\nADD Seam More 2 222-22-2222\nCOMPACT\nCOUNT\nQUIT\n' "$TEST_TMP/out" 10; cat "$TEST_TMP/out")" \
        $'OK\nOK\nOK\n2\nBye'
    check "installed build: SSN_TEST_COMPACT_CRASH=snapshot kills nothing" \
        srv_running "$SRV_PID"
    stop_server "$SRV_PID"
    expect_eq "installed build: a clean exit" "$STOP_RC" 0
    check "installed build: the log mentions no seam" \
        bash -c '! grep -q -e SSN_TEST_ -e "test seam" "$1"' _ "$SRV_ERR"
}

case_strings
case_install
case_ignored
finish
