#!/bin/bash
# test-server-lifecycle.sh -- a server's life outside the protocol: --help
# and --version for each mode, bad options (exit 2), -p 0 and the default
# bind address, a busy port, SIGTERM and SIGINT with a client connected, a
# stop that must abandon a session (exit 3), SIGHUP and SIGUSR2 the instant
# the server is ready, clients that vanish (SIGPIPE), --stdin --quiet, and
# serial mode serving a second client only after the first has gone, and
# --sched (the session threads' scheduling policy).
#
# Usage: test-server-lifecycle.sh [CASE...]; no CASE runs them all.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

MODES=(serial nolock coarse fine buffered)

# ---- --help, --version, bad options -----------------------------------

case_help_version() {
    local m n=0 out rc
    for m in "${MODES[@]}"; do
        n=$((n + 1))
        out=$(timeout 5 "$BIN/ssnserver-$m" --help 2>&1); rc=$?
        expect_eq "$m --help exits 0" "$rc" 0
        expect_match "$m --help names its lock mode" "$out" \
            "lock mode: $m \\(ssnserver$n\\)"
        expect_match "$m --help shows usage" "$out" '^usage: '
        out=$(timeout 5 "$BIN/ssnserver-$m" --version 2>&1); rc=$?
        expect_eq "$m --version exits 0" "$rc" 0
        expect_match "$m --version names its lock mode" "$out" \
            "^ssnserver [0-9][^ ]*, lock mode $m \\(ssnserver$n\\)$"
        out=$(timeout 5 "$BIN/ssnserver$n" -V 2>&1)
        expect_match "ssnserver$n -V is $m" "$out" "lock mode $m "
    done
    out=$(timeout 5 "$BIN/ssnserver-nolock" -h 2>&1)
    expect_match "nolock --help says it is racy" "$out" \
        '[Rr][Aa][Cc][Yy]|[Uu][Nn][Ss][Aa][Ff][Ee]'
    out=$(timeout 5 "$BIN/ssnserver-fine" -h 2>&1)
    if [[ $out =~ [Rr]acy ]]; then
        not_ok "fine --help does not call itself racy"
    else
        ok "fine --help does not call itself racy"
    fi
}

# bad_option DESC ARGS...: exit status 2, a message on stderr, nothing on
# stdout (no "listening" line).
bad_option() {
    local desc=$1 rc
    shift
    timeout 5 "$BIN/ssnserver-fine" "$@" >"$TEST_TMP/bad.out" \
        2>"$TEST_TMP/bad.err" </dev/null
    rc=$?
    if [[ $rc -eq 2 && -s $TEST_TMP/bad.err && ! -s $TEST_TMP/bad.out ]]; then
        ok "bad option $desc: exit 2 with a message"
    else
        not_ok "bad option $desc: exit 2 with a message (rc $rc)"
        head -n 2 "$TEST_TMP/bad.err" "$TEST_TMP/bad.out" | sed 's/^/#   /'
    fi
}

case_bad_options() {
    bad_option "--bogus" --bogus
    bad_option "-x" -x
    bad_option "-p 65536" -p 65536
    bad_option "-p -1" -p -1
    bad_option "-p abc" -p abc
    bad_option "-p 12ab" -p 12ab
    bad_option "-p (no value)" -p
    bad_option "-m 0" -p 0 -m 0
    bad_option "-m x" -p 0 -m x
    printf 'pw\n' >"$TEST_TMP/pw"; chmod 600 "$TEST_TMP/pw"
    bad_option "-m 1 with a password (no room below it for the unauthenticated)" \
        -p 0 -m 1 --password-file "$TEST_TMP/pw"
    : >"$TEST_TMP/same"; ln -sf "$TEST_TMP/same" "$TEST_TMP/same.link"
    bad_option "--journal and --log-file one empty file, by a link" \
        -p 0 --journal "$TEST_TMP/same" --log-file "$TEST_TMP/same.link"
    expect_match "... saying which" "$(cat "$TEST_TMP/bad.err")" \
        "^ssnserver-fine: --journal and --log-file name the same file"
    bad_option "--trace-file the password file" \
        -p 0 --password-file "$TEST_TMP/pw" --trace-file "$TEST_TMP/pw"
    expect_eq "... the password file untouched" "$(cat "$TEST_TMP/pw")" pw
    bad_option "--log-level loud" -p 0 --log-level loud
    bad_option "--race-window -5" -p 0 --race-window -5
    bad_option "--max-output-total 1 (no reply could fit)" -p 0 --max-output-total 1
    bad_option "two ports" 0 1
    bad_option "extra argument" -p 0 0 extra
    local msg
    msg=$(timeout 5 "$BIN/ssnserver-fine" -p abc 2>&1 >/dev/null)
    expect_match "bad option message names the bad value" "$msg" "'abc'"
    timeout 5 "$BIN/ssnserver-fine" -p 0 --log-file "$TEST_TMP/no/such/dir/log" \
        >/dev/null 2>"$TEST_TMP/bad.err" </dev/null
    local rc=$?
    check "an unopenable --log-file: non-zero exit (rc $rc) with a message" \
        test "$rc" -ne 0 -a "$rc" -ne 124 -a -s "$TEST_TMP/bad.err"
}

# ---- ports and addresses ----------------------------------------------

case_ports() {
    local out port
    start_server fine || return
    port=$SRV_PORT
    check "-p 0 prints a real port" test "$port" -gt 0 -a "$port" -le 65535
    converse_str "$port" 'COUNT\nDONE\n' "$TEST_TMP/port.out"
    expect_eq "the printed port answers" "$(tr '\n' ' ' <"$TEST_TMP/port.out")" \
        "0 Bye "
    expect_match "the first stdout line is 'listening on 127.0.0.1:PORT'" \
        "$(head -n 1 "$SRV_OUT")" '^listening on 127\.0\.0\.1:[0-9]+$'

    if command -v ss >/dev/null 2>&1; then
        out=$(ss -Hltn "sport = :$port" 2>/dev/null)
        expect_match "default bind is 127.0.0.1 (ss)" "$out" "127\\.0\\.0\\.1:$port"
        if [[ $out =~ (0\.0\.0\.0|\*|\[::\]):$port ]]; then
            not_ok "default bind is not a wildcard (ss)"
        else
            ok "default bind is not a wildcard (ss)"
        fi
    else
        echo "# skip: ss not installed, default bind checked only by the start-up line"
    fi

    # A second server on the same port must fail at start-up, clearly.
    timeout 5 "$BIN/ssnserver-fine" -p "$port" >"$TEST_TMP/busy.out" \
        2>"$TEST_TMP/busy.err" </dev/null
    local rc=$?
    check "a busy port: non-zero exit (rc $rc)" test "$rc" -ne 0 -a "$rc" -ne 124
    check "a busy port: a message on stderr" test -s "$TEST_TMP/busy.err"
    check "the first server still serves" srv_running "$SRV_PID"
    stop_server "$SRV_PID"
}

# ---- signals -----------------------------------------------------------

# stop_with MODE SIG: a client connected and idle, then SIG; the server
# must exit 0 within 2 s and the client see its connection closed.
stop_with() {
    local mode=$1 sig=$2 t0 ms fd
    start_server "$mode" || return
    open_conn "$SRV_PORT"; fd=$CONN
    send_line "$fd" COUNT
    read_line "$fd" 3
    if [[ $mode == serial || $mode == coarse ]]; then
        # And one more waiting: in the backlog (serial) or for the lock
        # the first holds (coarse).
        open_conn "$SRV_PORT"
        send_line "$CONN" COUNT
        local waiting=$CONN
    fi
    t0=$(now)
    srv_signal "$sig" "$SRV_PID"
    if srv_wait_gone "$SRV_PID" 2; then
        ms=$(elapsed_ms "$t0")
        wait "$SRV_PID"
        expect_eq "$mode: SIG$sig with an idle client: exit 0 within 2 s (${ms} ms)" \
            "$?" 0
    else
        not_ok "$mode: SIG$sig with an idle client: exit 0 within 2 s"
        stop_server "$SRV_PID" KILL
    fi
    if read_line "$fd" 2; then
        not_ok "$mode: the idle client's connection is closed (got '$LINE')"
    else
        ok "$mode: the idle client's connection is closed"
    fi
    close_conn "$fd"
    if [[ $mode == serial || $mode == coarse ]]; then
        close_conn "$waiting"
    fi
}

# stop_stuck MODE IO WANT: a client asks for big PRINTs and never reads, so
# its session blocks in send() (holding the store lock in fine mode) where
# shutting the read side cannot reach it. main.c gives sessions 500 ms and
# then abandons the ones still running: SIGTERM must end the server within
# 2.5 s with exit 3 and a log line that says so (WANT 3), or with exit 0
# and no such line where nothing blocks (WANT 0: buffered --io events
# queues the replies, and its worker closes the connection).
stop_stuck() {
    local mode=$1 io=$2 want=$3 t0 ms fd i rc
    local desc="$mode --io $io: SIGTERM with a client not reading its PRINT"
    SSN_IO=$io start_server "$mode" || return
    converse "$SRV_PORT" "$TEST_TMP/big.req" "$TEST_TMP/big.out" 10
    exec {fd}<>"/dev/tcp/127.0.0.1/$SRV_PORT"
    for ((i = 0; i < 20; i++)); do echo PRINT; done >&"$fd"
    sleep 0.3
    t0=$(now)
    srv_signal TERM "$SRV_PID"
    if srv_wait_gone "$SRV_PID" 2.5; then
        ms=$(elapsed_ms "$t0")
        wait "$SRV_PID"
        rc=$?
        expect_eq "$desc: exit $want within 2.5 s (${ms} ms)" "$rc" "$want"
        if [[ $want == 3 ]]; then
            check "$desc: the log says a session was abandoned" \
                grep -q '1 session.* abandoned; exiting with status 3$' "$SRV_ERR"
        elif grep -q abandoned "$SRV_ERR"; then
            not_ok "$desc: the log says nothing was abandoned"
        else
            ok "$desc: the log says nothing was abandoned"
        fi
    else
        not_ok "$desc: exit $want within 2.5 s"
        stop_server "$SRV_PID" KILL
    fi
    eval "exec $fd>&-"
}

case_signals() {
    local m i
    for m in "${MODES[@]}"; do
        stop_with "$m" TERM
        stop_with "$m" INT
    done
    for ((i = 0; i < 5000; i++)); do
        printf 'ADD s%d Stuck%d 1 123-45-6789\n' "$i" $((i % 10))
    done >"$TEST_TMP/big.req"
    echo DONE >>"$TEST_TMP/big.req"
    stop_stuck fine threads 3
    stop_stuck buffered threads 3
    stop_stuck fine events 3            # the worker blocks: fine's PRINT
    stop_stuck buffered events 0
}

# ---- a signal the instant the server is ready --------------------------

READY_RUNS=100                  # servers started per signal

# signal_at_ready IO SIG: READY_RUNS times, starts ssnserver-buffered with
# its stdout on a FIFO and sends SIG the moment the first byte of its
# "listening on" line arrives (the line is one write, so it is all out by
# then): the server must still run, answer COUNT, and stop on SIGTERM with
# exit 0. A supervisor may signal that early, so every signal the server
# handles or ignores must be in place before the line. When libevent's
# signal events were added after it, SIGHUP killed the server in 30 to 60
# runs of 100 with --io threads (3 to 20 with --io events) on two cores.
signal_at_ready() {
    local io=$1 sig=$2 fifo=$TEST_TMP/ready.fifo err=$TEST_TMP/ready.err
    local i rfd first line what first_fail="" bad=0 t0
    local desc="buffered --io $io: SIG$sig the instant 'listening on' is printed"
    [[ -p $fifo ]] || mkfifo "$fifo" || { not_ok "$desc: mkfifo"; return; }
    t0=$(now)
    for ((i = 0; i < READY_RUNS; i++)); do
        srv_launch "$fifo" "$err" "$BIN/ssnserver-buffered" -p 0 --io "$io"
        exec {rfd}<"$fifo"
        first="" line="" what=""
        IFS= read -r -N 1 -t 5 -u "$rfd" first && srv_signal "$sig" "$SRV_PID"
        IFS= read -r -t 5 -u "$rfd" line
        line=$first$line
        if [[ ! $line =~ ^listening\ on\ 127\.0\.0\.1:([0-9]+)$ ]]; then
            what="first line '$line'"
        elif ! srv_running "$SRV_PID"; then
            what="gone after SIG$sig"
        else
            LINE=""
            {   # quiet: a server that dies now resets the connection
                if open_conn "${BASH_REMATCH[1]}"; then
                    send_line "$CONN" COUNT
                    read_line "$CONN" 3
                    close_conn "$CONN"
                fi
            } 2>/dev/null
            [[ $LINE == 0 ]] || what="no answer to COUNT after SIG$sig"
        fi
        # The FIFO's end of file says the server has exited.
        srv_signal TERM "$SRV_PID" && IFS= read -r -t 3 -u "$rfd" _
        exec {rfd}<&-
        srv_stop "$SRV_PID" TERM 2
        [[ -n $what || $SRV_RC == 0 ]] || what="exit $SRV_RC after SIGTERM"
        [[ -z $what ]] && continue
        bad=$((bad + 1))
        if [[ -z $first_fail ]]; then
            first_fail="run $((i + 1)): $what (exit $SRV_RC)"
            cp "$err" "$TEST_TMP/server-ready-$io-$sig.err"  # for finish
        fi
    done
    if ((bad == 0)); then
        ok "$desc: survives, answers and stops with exit 0, $READY_RUNS of $READY_RUNS ($(elapsed_ms "$t0") ms)"
    else
        not_ok "$desc: survives, answers and stops with exit 0, $((READY_RUNS - bad)) of $READY_RUNS"
        echo "#   first failure: $first_fail"
        sed 's/^/#   stderr: /' "$TEST_TMP/server-ready-$io-$sig.err" | head -n 3
    fi
}

# In the I/O model the suite runs in (SSN_IO, default threads): the signals
# are set up the same way before either model listens, and each run costs
# 30 to 70 ms on two busy cores, so both models each time would cost as
# much again. SSN_IO=events runs them against the event workers.
case_signal_at_ready() {
    signal_at_ready "${SSN_IO:-threads}" HUP
    signal_at_ready "${SSN_IO:-threads}" USR2
}

# ---- the log -----------------------------------------------------------

case_log_file() {
    local log=$TEST_TMP/server.log out=$TEST_TMP/log.out
    start_server fine --log-level debug --log-file "$log" || return
    converse_str "$SRV_PORT" 'ADD Log Person 42 987-65-4321\nFIND Log Person\nPRINT\nDIGEST\nDELETE Log Person\nDONE\n' "$out"
    expect_eq "with --log-file: the session works" "$(sed -n 1p "$out")" OK
    stop_server "$SRV_PID"
    expect_eq "with --log-file: exit 0" "$STOP_RC" 0
    check "--log-file receives the log" test -s "$log"
    if grep -q '987-65-4321' "$log" "$SRV_ERR" "$SRV_OUT"; then
        not_ok "SSNs never reach the log (debug level)"
    else
        ok "SSNs never reach the log (debug level)"
    fi
    expect_eq "stdout holds only the listening line" "$(wc -l <"$SRV_OUT")" 1
}

# ---- SIGPIPE: clients that leave without reading -----------------------

case_sigpipe() {
    local i fd req=$TEST_TMP/fill.req out=$TEST_TMP/fill.out
    start_server fine || return
    for ((i = 0; i < 3000; i++)); do
        printf 'ADD p%d Pipe%d 1 123-45-6789\n' "$i" $((i % 10))
    done >"$req"
    echo DONE >>"$req"
    converse "$SRV_PORT" "$req" "$out" 10
    for ((i = 0; i < 4; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$SRV_PORT" || continue
        printf 'PRINT\nPRINT\n' >&"$fd"
        ((i % 2)) && IFS= read -r -t 3 -u "$fd" _
        eval "exec $fd>&-"
    done
    # Replies to a thousand requests nobody reads.
    exec {fd}<>"/dev/tcp/127.0.0.1/$SRV_PORT" && {
        for ((i = 0; i < 1000; i++)); do echo HELP; done >&"$fd"
        eval "exec $fd>&-"
    }
    sleep 0.3
    check "the server survives clients that vanish (SIGPIPE)" \
        srv_running "$SRV_PID"
    converse_str "$SRV_PORT" 'COUNT\nDONE\n' "$out"
    expect_eq "the server still answers after SIGPIPE-prone clients" \
        "$(tr '\n' ' ' <"$out")" "3000 Bye "
    stop_server "$SRV_PID"
    expect_eq "and still stops cleanly (exit 0)" "$STOP_RC" 0
}

# ---- --stdin -----------------------------------------------------------

case_stdin() {
    local out rc want
    want=$(printf '%s\n%-30s -- %11s %4d\n%s' "$HEAD_LINE" "b, a" \
        123-45-6789 1 "$TAIL_LINE")
    out=$(printf 'ADD a b 1 123-45-6789\nPRINT\nDONE\n' |
          timeout 5 "$BIN/ssnserver" --stdin --quiet 2>"$TEST_TMP/stdin.err")
    rc=$?
    expect_eq "--stdin --quiet prints just the PRINT block" "$out" "$want"
    expect_eq "--stdin --quiet exits 0" "$rc" 0
    check "--stdin --quiet writes nothing on stderr" \
        test ! -s "$TEST_TMP/stdin.err"

    out=$(printf 'ADD a b 1 123-45-6789\nADD a b 1 123-45-6789\nCOUNT\nDONE\n' |
          timeout 5 "$BIN/ssnserver-serial" --stdin 2>/dev/null)
    expect_eq "--stdin without --quiet says OK and Bye" "$out" \
        $'OK\nError: a b already exists\n1\nBye'

    # A reader that leaves early: EPIPE on stdout, not death by SIGPIPE.
    local i
    for ((i = 0; i < 3000; i++)); do
        printf 'ADD f%d Last%d 1 123-45-6789\n' "$i" "$i"
    done >"$TEST_TMP/stdin.req"
    for ((i = 0; i < 20; i++)); do echo PRINT; done >>"$TEST_TMP/stdin.req"
    timeout 5 "$BIN/ssnserver-fine" --stdin --quiet <"$TEST_TMP/stdin.req" \
        2>/dev/null | head -n 1 >/dev/null
    expect_eq "--stdin: stdout closed early: exit 0, no SIGPIPE death" \
        "${PIPESTATUS[0]}" 0

    # Any other failed write or read: status 1, saying which.
    printf 'COUNT\nCOUNT\n' | timeout 5 "$BIN/ssnserver" --stdin --quiet \
        >/dev/full 2>"$TEST_TMP/stdin.err"
    expect_eq "--stdin: a failed write (/dev/full) exits 1" "$?" 1
    check "--stdin: ... saying why" grep -q \
        "cannot write standard output: No space left on device" \
        "$TEST_TMP/stdin.err"
    timeout 5 "$BIN/ssnserver" --stdin --quiet </ >/dev/null \
        2>"$TEST_TMP/stdin.err"
    expect_eq "--stdin: a failed read (a directory) exits 1" "$?" 1
    check "--stdin: ... saying why" grep -q \
        "cannot read standard input: Is a directory" "$TEST_TMP/stdin.err"

    out=$(printf 'ADD a b 1 123-45-6789\nCOUNT' |
          timeout 5 "$BIN/ssnserver-fine" --stdin --quiet 2>/dev/null)
    rc=$?
    expect_eq "--stdin: end of input without DONE exits 0" "$rc" 0
    expect_eq "--stdin: a last line without newline is not a request" "$out" ""
}

# ---- serial (and coarse): one client at a time ------------------------

# one_at_a_time MODE: serial keeps the second client in the backlog, coarse
# behind the lock the first holds for its whole connection.
one_at_a_time() {
    local a b got mode=$1
    start_server "$mode" || return
    open_conn "$SRV_PORT"; a=$CONN
    send_line "$a" COUNT
    read_line "$a" 3
    expect_eq "$mode: client 1 is served" "$LINE" 0

    open_conn "$SRV_PORT"; b=$CONN
    send_line "$b" COUNT
    if read_line "$b" 0.5; then
        not_ok "$mode: client 2 waits while client 1 is connected (got '$LINE')"
    else
        ok "$mode: client 2 waits while client 1 is connected"
    fi
    send_line "$a" "ADD x y 2 123-45-6789"
    read_line "$a" 3
    expect_eq "$mode: client 1 still served meanwhile" "$LINE" OK
    send_line "$a" DONE
    read_line "$a" 3
    expect_eq "$mode: client 1 says DONE" "$LINE" Bye
    close_conn "$a"
    read_line "$b" 3; got=$LINE
    expect_eq "$mode: client 2 answered once client 1 has gone" "$got" 1
    send_line "$b" DONE
    read_line "$b" 3
    close_conn "$b"
    stop_server "$SRV_PID"
}

case_one_at_a_time() {
    one_at_a_time serial
    one_at_a_time coarse
}

# The same situation in fine mode: client 2 is answered at once.
case_fine_concurrent() {
    local a b
    start_server fine || return
    open_conn "$SRV_PORT"; a=$CONN
    send_line "$a" COUNT
    read_line "$a" 3
    open_conn "$SRV_PORT"; b=$CONN
    send_line "$b" COUNT
    if read_line "$b" 2; then
        expect_eq "fine: client 2 answered while client 1 is connected" "$LINE" 0
    else
        not_ok "fine: client 2 answered while client 1 is connected"
    fi
    close_conn "$a"
    close_conn "$b"
    stop_server "$SRV_PID"
}

# A file-size limit (ulimit -f) below the journal's first reservation:
# SIGXFSZ's default action killed the server before it listened. Ignored,
# the write fails with EFBIG, and the journal refuses writes, saying why.
case_file_size_limit() {
    if ! command -v prlimit >/dev/null; then
        ok "file-size limit: SKIP (no prlimit)"
        return
    fi
    local j=$TEST_TMP/fsize.journal
    rm -f "$j"
    if ! srv_start "$TEST_TMP/fsize.out" "$TEST_TMP/fsize.err" 5 \
            prlimit --fsize=20000 "$BIN/ssnserver-buffered" -p 0 \
            --journal "$j"; then
        not_ok "file-size limit: the server starts (stderr: $(tail -n 1 "$TEST_TMP/fsize.err"))"
        return
    fi
    converse_str "$SRV_PORT" "ADD Big File 30 123-45-6789\nCOUNT\nDONE\n" \
        "$TEST_TMP/fsize.conv"
    expect_match "file-size limit: ADD refused, saying why; the server answers" \
        "$(cat "$TEST_TMP/fsize.conv")" $'^Error: .*File too large\n0\nBye$'
    stop_server "$SRV_PID"
    expect_eq "file-size limit: a clean exit" "$STOP_RC" 0
}

# A core file would hold every name and SSN: started where the shell
# allows one (prlimit), the server sets its own limit to 0; with
# --core-dumps it keeps what it was given.
case_core_limit() {
    local soft hard
    if ! command -v prlimit >/dev/null; then
        ok "core limit: SKIP (no prlimit)"
        return
    fi
    hard=$(ulimit -H -c)
    if [[ $hard == 0 ]]; then           # 0:0 would pass without the code
        ok "core limit: SKIP (the hard core limit is 0 here)"
        return
    fi
    soft=$hard
    for opt in "" --core-dumps; do
        if ! srv_start "$TEST_TMP/core.out" "$TEST_TMP/core.err" 5 \
                prlimit --core="$soft:$hard" "$BIN/ssnserver-buffered" -p 0 \
                $opt; then
            not_ok "core limit ${opt:-default}: the server starts"
            continue
        fi
        local got
        got=$(awk '/^Max core file size/ { print $5 ":" $6 }' \
              "/proc/$SRV_PID/limits")
        if [[ -z $opt ]]; then
            expect_eq "core limit: 0 whatever the shell allows ($soft:$hard)" \
                "$got" "0:0"
        else
            expect_eq "core limit --core-dumps: kept as given" \
                "$got" "$soft:$hard"
        fi
        stop_server "$SRV_PID"
    done
}

# STATS RESET zeroes the counters STATS shows, not the log's last line:
# "stopped after 0 connections" after a RESET was a false account.
case_reset_then_stop() {
    start_server buffered || return
    converse_str "$SRV_PORT" "ADD Re Set 30 123-45-6789\nDONE\n" "$TEST_TMP/rs1"
    converse_str "$SRV_PORT" "STATS RESET\nCOUNT\nDONE\n" "$TEST_TMP/rs2"
    stop_server "$SRV_PID"
    check "after STATS RESET, the last log line still counts every connection and command" \
        grep -q 'stopped after 2 connections, [45] commands$' "$SRV_ERR"
    check "quiet by default: no line per connection at the default level" \
        bash -c '! grep -q "connection from" "$1"' _ "$SRV_ERR"
}

# --sched: a session thread's policy (policy_counts, lib/common.sh: 3 is
# SCHED_BATCH, 0 the kernel's default); no other thread changes.
case_sched() {
    local sched pol
    for sched in default batch normal; do
        if [[ $sched == default ]]; then
            start_server buffered --io threads || return
        else
            start_server buffered --io threads --sched "$sched" || return
        fi
        open_conn "$SRV_PORT"
        send_line "$CONN" "COUNT"
        read_line "$CONN" 5
        expect_eq "--sched $sched: the session answers" "$LINE" 0
        send_line "$CONN" "STATS"
        local stat=""
        while read_line "$CONN" 5 && [[ $LINE != END ]]; do
            [[ $LINE == "sched "* ]] && stat=${LINE#sched }
        done
        expect_eq "--sched $sched: STATS says sched" "$stat" \
            "$([[ $sched == normal ]] && echo normal || echo batch)"
        pol=$(policy_counts "$SRV_PID")
        if [[ $sched != normal ]]; then
            expect_match "--sched $sched: one thread (the session's) is SCHED_BATCH, the rest the default ($pol)" \
                "$pol" '^ [0-9]+ 0, 1 3,$'
        else
            expect_match "--sched normal: every thread keeps the default ($pol)" \
                "$pol" '^ [0-9]+ 0,$'
        fi
        close_conn "$CONN"
        stop_server "$SRV_PID"
    done
    bad_option "--sched fast" -p 0 --sched fast
    # Each model refuses the other's option rather than ignore it.
    bad_option "--sched with --io events" -p 0 --io events --sched normal
    expect_match "--sched with --io events: says why" "$(<"$TEST_TMP/bad.err")" \
        '^ssnserver-fine: --sched works only with --io threads'
    bad_option "--workers with --io threads" -p 0 --workers 2
    expect_match "--workers with --io threads: says why" "$(<"$TEST_TMP/bad.err")" \
        '^ssnserver-fine: --workers works only with --io events'
}

# --sched batch refused (as a container's system-call filter may refuse
# it; refuse-sched-batch.so, tests/refuse_sched_batch.c, plays that part):
# every session is served, the log says so once, and STATS says "normal",
# what the threads run as, not "batch".
case_sched_refused() {
    local so=${BUILD:-build}/tests/refuse-sched-batch.so i stat pol
    if [[ "$BIN" != bin || ! -f "$so" ]]; then
        ok "# SKIP SCHED_BATCH refused: plain build only (BIN=$BIN)"
        return
    fi
    LD_PRELOAD=$PWD/$so start_server buffered --io threads || return
    for i in 1 2; do
        open_conn "$SRV_PORT"
        send_line "$CONN" "COUNT"
        read_line "$CONN" 5
        expect_eq "SCHED_BATCH refused: session $i answers" "$LINE" 0
        [[ $i == 2 ]] || close_conn "$CONN"
    done
    send_line "$CONN" "STATS"
    stat=""
    while read_line "$CONN" 5 && [[ $LINE != END ]]; do
        [[ $LINE == "sched "* ]] && stat=${LINE#sched }
    done
    expect_eq "SCHED_BATCH refused: STATS says sched normal" "$stat" normal
    pol=$(policy_counts "$SRV_PID")
    expect_match "SCHED_BATCH refused: no thread runs as it ($pol)" "$pol" \
        '^ [0-9]+ 0,$'
    close_conn "$CONN"
    stop_server "$SRV_PID"              # the log written out
    expect_eq "SCHED_BATCH refused: the log says so once" \
        "$(grep -c 'SCHED_BATCH refused (Operation not permitted); session threads keep the default policy' "$SRV_ERR")" 1
}

CASES=(case_help_version case_bad_options case_ports case_signals
       case_signal_at_ready case_file_size_limit case_log_file case_sigpipe
       case_stdin case_reset_then_stop case_sched case_sched_refused
       case_one_at_a_time case_fine_concurrent case_core_limit)
(($# == 0)) || CASES=("$@")
for c in "${CASES[@]}"; do
    t0=$(now)
    $c
    echo "# $c: $(elapsed_ms "$t0") ms"
done

finish
