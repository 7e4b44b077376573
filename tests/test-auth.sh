#!/bin/bash
# test-auth.sh -- --password-file and AUTH over real TCP (docs/PROTOCOL.md,
# AUTH): before AUTH only AUTH, HELP and QUIT are served, so PRINT, FIND,
# DIGEST and STATS never show an SSN; a wrong password is refused, counted
# in STATS and logged with the peer's address (never the guess); AUTH on a
# server without a password; password files that cannot be used; protected
# mode (-b 0.0.0.0); inclient and kill_it with and without --password-file;
# and no SSN in a debug log. Every server is started here and stopped by PID
# (tests/lib/common.sh).
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

umask 077                       # the server refuses a password file others
                                # can read (test-journal-owner.sh tests it)
IC=$CLIENTS_BIN/inclient KI=$CLIENTS_BIN/kill_it
PW=s3cret-Pw.42
WRONG=guess-Nr.7
PWFILE=$TEST_TMP/password
printf '%s\n' "$PW" >"$PWFILE"
printf '%s\n' "$WRONG" >"$TEST_TMP/wrong-password"

NEED="Error: authentication required"
HELP_LINES=$(printf 'HELP\n' | "$BIN/ssnserver-buffered" --stdin -q 2>/dev/null)

# begin NAME: a new conversation: files $REQ, $EXP and $OUT.
begin() {
    REQ=$TEST_TMP/$1.req EXP=$TEST_TMP/$1.exp OUT=$TEST_TMP/$1.out
    : >"$REQ"
    : >"$EXP"
}
req() { printf '%s\n' "$1" >>"$REQ"; }
want() { printf '%s\n' "$1" >>"$EXP"; }
talk() { converse "$SRV_PORT" "$REQ" "$OUT" 5; }

# stats_value NAME: NAME's value in a fresh authenticated STATS.
stats_value() {
    converse_str "$SRV_PORT" "AUTH $PW\nSTATS\nDONE\n" "$TEST_TMP/stats.out"
    awk -v k="$1" '$1 == k { print $2 }' "$TEST_TMP/stats.out"
}

# wait_log FILE ERE: up to 3 s for the server's log writer to get there.
wait_log() {
    local i
    for ((i = 0; i < 150; i++)); do
        grep -qE -- "$2" "$1" && return 0
        sleep 0.02
    done
    return 1
}

# ---- before and after AUTH, every kind of request ----------------------
if start_server buffered --password-file "$PWFILE"; then
    # One person, added by an authenticated client, whom the others try to
    # see without a password.
    begin seed
    req "AUTH $PW"; want OK
    req "ADD Ann Lee 41 111-22-3333"; want OK
    req DONE; want Bye
    talk
    expect_file "with a password: AUTH, then ADD" "$OUT" "$EXP"

    begin before
    for r in "ADD Bo Ng 30 222-33-4444" "DELETE Ann Lee" "FIND Ann Lee" \
             PRINT COUNT CHECK DIGEST STATS "STATS RESET" TREE "tree 2"; do
        req "$r"; want "$NEED"
    done
    req HELP; printf '%s\n' "$HELP_LINES" >>"$EXP"
    req "AUTH"; want "Error: usage: AUTH password"
    req "AUTH $PW extra"; want "Error: usage: AUTH password"
    req "AUTH $WRONG"; want "Error: invalid password"
    req COUNT; want "$NEED"
    req QUIT; want Bye
    talk
    expect_file "before AUTH: every request but AUTH, HELP and QUIT is refused" \
        "$OUT" "$EXP"
    check "before AUTH: PRINT, FIND, DIGEST and STATS show no SSN or name" \
        bash -c "! grep -qE '111-22-3333|Lee|^[0-9a-f]{64}\$|^entries' '$OUT'"

    begin after
    req "auth $PW"; want OK
    req "ADD Bo Ng 30 222-33-4444"; want OK
    req "FIND Ann Lee"; print_line Ann Lee 41 111-22-3333 >>"$EXP"
    req PRINT
    { echo "$HEAD_LINE"; print_line Ann Lee 41 111-22-3333
      print_line Bo Ng 30 222-33-4444; echo "$TAIL_LINE"; } >>"$EXP"
    req COUNT; want 2
    req CHECK; want "OK 2 entries, all invariants hold"
    req DIGEST
    printf 'Lee Ann 41 111-22-3333\nNg Bo 30 222-33-4444\n' | sha256sum |
        cut -d' ' -f1 >>"$EXP"
    req "DELETE Bo Ng"; want OK
    req "AUTH $PW"; want OK
    req HELP; printf '%s\n' "$HELP_LINES" >>"$EXP"
    req DONE; want Bye
    talk
    expect_file "after AUTH: ADD, FIND, PRINT, COUNT, CHECK, DIGEST, DELETE, HELP" \
        "$OUT" "$EXP"

    converse_str "$SRV_PORT" "AUTH $PW\nSTATS\nSTATS RESET\nTREE 1\nDONE\n" \
        "$TEST_TMP/after2.out"
    a=$(cat "$TEST_TMP/after2.out")
    expect_match "after AUTH: STATS, STATS RESET and TREE are served" "$a" \
        $'^OK\nmode buffered\n.*\nauth_required 1\n.*\nEND\nOK\n.*Bye$'

    # Wrong passwords: refused, counted, logged with the peer, never echoed.
    failures=$(stats_value auth_failures)
    converse_str "$SRV_PORT" "AUTH $WRONG\nAUTH $WRONG\nAUTH $PW\nDONE\n" \
        "$OUT"
    expect_eq "a wrong password: 'Error: invalid password', and the right one still works" \
        "$(cat "$OUT")" $'Error: invalid password\nError: invalid password\nOK\nBye'
    expect_eq "STATS auth_failures counts the wrong passwords" \
        "$(stats_value auth_failures)" $((failures + 2))
    check "the log names the peer of a failed AUTH (127.0.0.1)" \
        wait_log "$SRV_ERR" 'authentication failed from 127\.0\.0\.1:[0-9]+'
    # A session's parse error still reaches it before AUTH: no store access.
    converse_str "$SRV_PORT" "FROB\nADD Bad Age x 111-22-3333\nDONE\n" "$OUT"
    expect_eq "before AUTH: a malformed request gets its own error" \
        "$(cat "$OUT")" $'Error: Bad command: FROB\nError: bad age: a whole number from 0 to 150\nBye'
    stop_server "$SRV_PID"
    expect_eq "password server stops cleanly" "$STOP_RC" 0
    check "the log never holds a password or a guess" \
        bash -c "! grep -qF -e '$PW' -e '$WRONG' '$SRV_ERR'"
fi

# The gate is the session's, the same in every mode.
for mode in serial nolock coarse fine; do
    start_server "$mode" --password-file "$PWFILE" || continue
    converse_str "$SRV_PORT" "COUNT\nAUTH $PW\nCOUNT\nDONE\n" "$OUT"
    expect_eq "$mode: COUNT refused before AUTH, answered after" \
        "$(cat "$OUT")" "$NEED"$'\nOK\n0\nBye'
    stop_server "$SRV_PID"
done

# AUTH inside a pipelined batch (--io events keeps one store-lock hold
# across a run of FINDs): a wrong one is logged, and nothing logs under the
# store lock (log_msg asserts it), so the batch must end before AUTH runs.
# When it did not, the server aborted here.
for mode in fine buffered; do
    SSN_IO=events start_server "$mode" --password-file "$PWFILE" || continue
    converse_str "$SRV_PORT" "AUTH $PW\nFIND A B\nFIND A B\nAUTH $WRONG\nFIND A B\nAUTH $PW\nCOUNT\nDONE\n" "$OUT"
    expect_eq "$mode, events: a wrong AUTH inside a batch of FINDs answered in order" \
        "$(cat "$OUT")" $'OK\nError: A B not found\nError: A B not found\nError: invalid password\nError: A B not found\nOK\n0\nBye'
    stop_server "$SRV_PID"
    expect_eq "$mode, events: ... and the server was alive to stop cleanly" \
        "$STOP_RC" 0
done

# coarse with --io events: B sends 1000 HELPs, AUTH, COUNT and QUIT at
# once and reads slowly (a 4 kB receive buffer): 778 kB of answers queue
# for it, then its AUTH parks behind A's session-long lock, answered only
# once A's QUIT hands the lock over; then COUNT's 0 and Bye.
if SSN_IO=events start_server coarse --password-file "$PWFILE"; then
    printf '%s\n' "$HELP_LINES" >"$TEST_TMP/help.txt"
    timeout 30 python3 - "$SRV_PORT" "$PW" "$TEST_TMP/help.txt" >"$OUT" 2>&1 <<'PY'
import socket, sys, time
port, pw, help_text = int(sys.argv[1]), sys.argv[2], open(sys.argv[3], "rb").read()
a = socket.create_connection(("127.0.0.1", port), timeout=10)
a.sendall(f"AUTH {pw}\nCOUNT\n".encode())
got = b""
while got.count(b"\n") < 2:
    got += a.recv(4096)
print("A:", got.decode().replace("\n", " "))
b = socket.socket()
b.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
b.settimeout(10)
b.connect(("127.0.0.1", port))
b.sendall(b"HELP\n" * 1000 + f"AUTH {pw}\nCOUNT\nQUIT\n".encode())
want = help_text * 1000
got = b""
while len(got) < len(want):
    time.sleep(0.001)
    d = b.recv(4096)
    if not d:
        break
    got += d
print("B's HELPs:", "all" if got == want else f"{len(got)} bytes")
b.settimeout(0.5)
try:
    early = b.recv(4096)
except socket.timeout:
    early = b""
print("B before A's QUIT:", early.decode().replace("\n", " ") or "nothing")
a.sendall(b"QUIT\n")
b.settimeout(10)
got = early
while not got.endswith(b"Bye\n"):
    d = b.recv(4096)
    if not d:
        break
    got += d
print("B after:", got.decode().replace("\n", " "))
PY
    expect_eq "coarse, events: a slow reader's AUTH parks behind A's lock after 778 kB of answers, and is answered once A quits" \
        "$(cat "$OUT")" "A: OK 0 
B's HELPs: all
B before A's QUIT: nothing
B after: OK 0 Bye "
    stop_server "$SRV_PID"
    expect_eq "coarse, events: ... and the server stops cleanly" "$STOP_RC" 0
fi

# ---- AUTH without a password set ---------------------------------------
if start_server buffered; then
    converse_str "$SRV_PORT" "AUTH $PW\nCOUNT\nDONE\n" "$OUT"
    expect_eq "no password set: AUTH says so, and nothing else needs it" \
        "$(cat "$OUT")" $'Error: no password is set\n0\nBye'
    converse_str "$SRV_PORT" "STATS\nDONE\n" "$OUT"
    expect_eq "no password set: STATS auth_required 0" \
        "$(awk '$1 == "auth_required" { print $2 }' "$OUT")" 0
    stop_server "$SRV_PID"
fi

# ---- password files that cannot be used --------------------------------
# bad_file DESC FILE WANT_ERE: the server must refuse to start (status 1)
# with a message naming FILE.
bad_file() {
    local err=$TEST_TMP/badfile.err
    if srv_start "$TEST_TMP/badfile.out" "$err" 5 \
            "$BIN/ssnserver-buffered" -p 0 --password-file "$2"; then
        srv_stop "$SRV_PID"
        not_ok "$1: the server refuses to start"
        return
    fi
    expect_eq "$1: exit status 1" "$SRV_RC" 1
    expect_match "$1: the message names the file" "$(cat "$err")" \
        "--password-file: .*$2.*$3"
}
bad_file "a missing password file" "$TEST_TMP/no-such-file" "No such file"
: >"$TEST_TMP/empty"
bad_file "an empty password file" "$TEST_TMP/empty" "no password"
printf '\nsecond-line\n' >"$TEST_TMP/blank-first"
bad_file "a password file with a blank first line" "$TEST_TMP/blank-first" \
    "no password"
printf 'two words\n' >"$TEST_TMP/spaced"
bad_file "a password with a space" "$TEST_TMP/spaced" "space or tab"
printf 'tab\tbed\n' >"$TEST_TMP/tabbed"
bad_file "a password with a tab" "$TEST_TMP/tabbed" "space or tab"

# A file written on Windows: the "\r\n" is not part of the password.
printf '%s\r\n' "$PW" >"$TEST_TMP/crlf"
if start_server buffered --password-file "$TEST_TMP/crlf"; then
    converse_str "$SRV_PORT" "AUTH $PW\nCOUNT\nDONE\n" "$OUT"
    expect_eq "a password file ending in \\r\\n" "$(cat "$OUT")" $'OK\n0\nBye'
    stop_server "$SRV_PID"
fi

# ---- protected mode -----------------------------------------------------
# Listening on 0.0.0.0 here only binds; every byte of these tests goes to
# 127.0.0.1.
PM_OUT=$TEST_TMP/protected.out PM_ERR=$TEST_TMP/protected.err
if srv_start "$PM_OUT" "$PM_ERR" 5 "$BIN/ssnserver-buffered" -b 0.0.0.0 -p 0; then
    srv_stop "$SRV_PID"
    not_ok "-b 0.0.0.0 without a password: refuses to start"
else
    expect_eq "-b 0.0.0.0 without a password: exit status 1" "$SRV_RC" 1
    expect_match "-b 0.0.0.0 without a password: the message names --password-file and --unprotected" \
        "$(cat "$PM_ERR")" "refusing to listen on 0\.0\.0\.0.*--password-file.*--unprotected"
fi
if srv_start "$PM_OUT" "$PM_ERR" 5 "$BIN/ssnserver-buffered" -b 0.0.0.0 -p 0 \
        --unprotected; then
    ok "-b 0.0.0.0 --unprotected: starts"
    converse_str "$SRV_PORT" "COUNT\nDONE\n" "$OUT"
    expect_eq "-b 0.0.0.0 --unprotected: serves without AUTH" "$(cat "$OUT")" $'0\nBye'
    check "-b 0.0.0.0 --unprotected: warns that there is no password" \
        wait_log "$PM_ERR" 'warn .*NO password.*--unprotected'
    srv_stop "$SRV_PID"
    expect_eq "-b 0.0.0.0 --unprotected: stops cleanly" "$SRV_RC" 0
else
    not_ok "-b 0.0.0.0 --unprotected: starts (first line: '$SRV_LINE')"
fi
if srv_start "$PM_OUT" "$PM_ERR" 5 "$BIN/ssnserver-buffered" -b 0.0.0.0 -p 0 \
        --password-file "$PWFILE"; then
    ok "-b 0.0.0.0 with --password-file: starts"
    converse_str "$SRV_PORT" "COUNT\nAUTH $PW\nCOUNT\nDONE\n" "$OUT"
    expect_eq "-b 0.0.0.0 with --password-file: AUTH required" \
        "$(cat "$OUT")" "$NEED"$'\nOK\n0\nBye'
    check "-b 0.0.0.0 with --password-file: no warning" \
        bash -c "! grep -q 'NO password' '$PM_ERR'"
    srv_stop "$SRV_PID"
else
    not_ok "-b 0.0.0.0 with --password-file: starts (first line: '$SRV_LINE')"
fi

# ---- inclient and kill_it ----------------------------------------------
if start_server buffered --password-file "$PWFILE"; then
    printf 'ADD Ann Lee 41 111-22-3333\nCOUNT\nDELETE Ann Lee\nDONE\n' \
        >"$TEST_TMP/stream"
    "$IC" --password-file "$PWFILE" 127.0.0.1 "$SRV_PORT" - \
        <"$TEST_TMP/stream" >"$OUT" 2>"$TEST_TMP/ic.err"
    expect_eq "inclient --password-file: AUTH first, then the stream" \
        "$? $(tr '\n' ' ' <"$OUT")" "0 OK 1 OK Bye "
    "$IC" 127.0.0.1 "$SRV_PORT" - <"$TEST_TMP/stream" >"$OUT" 2>"$TEST_TMP/ic.err"
    expect_match "inclient without --password-file: status 1, and says the server wants one" \
        "$? $(cat "$TEST_TMP/ic.err")" \
        "^1 inclient: FAILED \(auth\): .*'$NEED'.*--password-file"
    "$IC" --password-file "$TEST_TMP/wrong-password" 127.0.0.1 "$SRV_PORT" - \
        <"$TEST_TMP/stream" >"$OUT" 2>"$TEST_TMP/ic.err"
    expect_match "inclient with a wrong password: status 1, naming the reply" \
        "$? $(cat "$TEST_TMP/ic.err")" \
        "^1 inclient: FAILED \(auth\): the server refused AUTH: it answered 'Error: invalid password'"
    check "inclient with a wrong password: nothing was sent after AUTH" \
        test ! -s "$OUT"
    check "inclient never prints the password" \
        bash -c "! grep -qF -e '$PW' -e '$WRONG' '$TEST_TMP/ic.err'"
    "$IC" --password-file "$TEST_TMP/no-such-file" 127.0.0.1 "$SRV_PORT" - \
        </dev/null >"$OUT" 2>"$TEST_TMP/ic.err"
    expect_match "inclient with a missing password file: status 1, naming it" \
        "$? $(cat "$TEST_TMP/ic.err")" "^1 inclient: --password-file: .*no-such-file"
    "$IC" --password-file "$TEST_TMP/spaced" 127.0.0.1 "$SRV_PORT" - \
        </dev/null >"$OUT" 2>"$TEST_TMP/ic.err"
    expect_match "inclient with a two-word password: status 1, naming the file" \
        "$? $(cat "$TEST_TMP/ic.err")" "^1 inclient: --password-file: .*spaced.*space"

    # kill_it's control connections (COUNT before, COUNT/CHECK/DIGEST
    # after), its preload and its clients all say AUTH first.
    "$KI" -q --password-file "$PWFILE" --preload 20 127.0.0.1 "$SRV_PORT" 300 4 \
        >"$TEST_TMP/ki.out" 2>"$TEST_TMP/ki.err"
    expect_match "kill_it --password-file: verified" \
        "$? $(tail -n 1 "$TEST_TMP/ki.out")" "^0 verified: "
    "$IC" -q --password-file "$PWFILE" 127.0.0.1 "$SRV_PORT" 500 3 \
        2>"$TEST_TMP/ic.err"
    expect_eq "inclient --password-file with a generated stream: status 0" "$?" 0
    "$KI" -q 127.0.0.1 "$SRV_PORT" 300 4 >"$TEST_TMP/ki.out" 2>"$TEST_TMP/ki.err"
    expect_match "kill_it without --password-file: FAILED at once, saying why" \
        "$? $(tail -n 1 "$TEST_TMP/ki.out")" \
        "^1 FAILED: the server requires a password: .*'$NEED'.*--password-file"
    "$KI" -q --password-file "$TEST_TMP/wrong-password" 127.0.0.1 "$SRV_PORT" 300 4 \
        >"$TEST_TMP/ki.out" 2>"$TEST_TMP/ki.err"
    expect_match "kill_it with a wrong password: FAILED, naming the reply" \
        "$? $(tail -n 1 "$TEST_TMP/ki.out")" \
        "^1 FAILED: the server refused AUTH: it answered 'Error: invalid password'"
    "$KI" -q --password-file "$TEST_TMP/empty" 127.0.0.1 "$SRV_PORT" 300 4 \
        >"$TEST_TMP/ki.out" 2>"$TEST_TMP/ki.err"
    expect_match "kill_it with an empty password file: status 1, naming it" \
        "$? $(cat "$TEST_TMP/ki.err")" "^1 kill_it: --password-file: .*empty"
    stop_server "$SRV_PID"
fi
if start_server buffered; then
    "$IC" --password-file "$PWFILE" 127.0.0.1 "$SRV_PORT" - \
        <"$TEST_TMP/stream" >"$OUT" 2>"$TEST_TMP/ic.err"
    expect_match "inclient --password-file on a server without one: status 1" \
        "$? $(cat "$TEST_TMP/ic.err")" "^1 .*'Error: no password is set'"
    "$KI" -q --password-file "$PWFILE" 127.0.0.1 "$SRV_PORT" 100 2 \
        >"$TEST_TMP/ki.out" 2>"$TEST_TMP/ki.err"
    expect_match "kill_it --password-file on a server without one: FAILED" \
        "$? $(tail -n 1 "$TEST_TMP/ki.out")" "^1 FAILED: .*'Error: no password is set'"
    "$KI" -q 127.0.0.1 "$SRV_PORT" 100 2 >"$TEST_TMP/ki.out" 2>&1
    expect_match "kill_it without a password on a server without one: verified" \
        "$? $(tail -n 1 "$TEST_TMP/ki.out")" "^0 verified: "
    stop_server "$SRV_PID"
fi

# ---- no SSN in a debug log ----------------------------------------------
SSNS=(123-45-6789 987-65-4321 555-00-1234)
LOG=$TEST_TMP/debug.log
if start_server buffered --log-level debug --log-file "$LOG" \
        --password-file "$PWFILE"; then
    converse_str "$SRV_PORT" "AUTH $PW\nADD John Smith 30 ${SSNS[0]}\nADD Jane Doe 29 ${SSNS[1]}\nADD Bad Ssn 40 ${SSNS[2]}x\nPRINT\nFIND Jane Doe\nDIGEST\nDELETE John Smith\nADD John Smith 31 ${SSNS[2]}\nPRINT\nDONE\n" \
        "$OUT"
    check "the debug session's PRINT shows the SSNs it added" \
        grep -qF "${SSNS[2]}" "$OUT"
    stop_server "$SRV_PID"
    check "the debug log was written (the session's connection is in it)" \
        grep -q 'connection from 127\.0\.0\.1' "$LOG"
    leaked=$(grep -cF -e "${SSNS[0]}" -e "${SSNS[1]}" -e "${SSNS[2]}" "$LOG")
    expect_eq "no SSN in the --log-level debug log of a session that ADDs and PRINTs" \
        "$leaked" 0
    check "no password in the debug log" bash -c "! grep -qF '$PW' '$LOG'"
fi

finish
