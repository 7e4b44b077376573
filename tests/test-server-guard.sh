#!/bin/bash
# test-server-guard.sh -- no client, authenticated or not, exhausts the
# server (docs/LIMITS.md), each attack scaled to seconds, in both I/O
# models:
#   1. memory: clients that pipeline "ADD someone new" then PRINT and never
#      read keep peak RSS within base + budget + listings in flight +
#      connections, and the ones holding the most are dropped
#      (--max-output-total; without it the same attack passes the bound);
#      the same with TREE 10, whose drawings are charged as PRINT's
#      listings are and made two at a time; sessions waiting for the store
#      lock hold no latency histograms;
#   2. guessing: pipelined wrong AUTHs on one connection are answered
#      slowly (250, 500, 1000 ms) and the connection is closed after 3,
#      while an event worker's other client is answered at once; once an
#      address has failed a few times, the right password waits too, so
#      hanging up on a late answer tells a guesser nothing;
#   3. the log: wrong AUTHs from many connections of one address write
#      about one line a second, the rest counted (log_lines_suppressed);
#   4. unauthenticated connections: with 1,024 of them open, a client with
#      the password is admitted (the oldest are dropped, --max-unauth);
#      coarse and serial serve others while one idles before AUTH; the
#      idle ones are closed after --login-grace.
# The half-open peer freed by --tcp-keepalive is test-server-keepalive.sh
# (a network namespace). Every server runs on 127.0.0.1 port 0 and is
# stopped by PID (tests/lib/server.sh).
# run-all: beside
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/limits.sh"

SSN=123-45-6789
PW=guard-Pw.9
# SANITIZED=1 (test-server-tsan.sh, test-server-asan.sh): the same attacks
# for the sanitizer's eyes, given more time; RSS is the sanitizer's shadow
# memory more than the server's, so its bounds are not checked.
SANITIZED=${SANITIZED:-0}
umask 077                       # the server refuses a readable password file
PWFILE=$TEST_TMP/password
printf '%s\n' "$PW" >"$PWFILE"

hwm_kb() {
    awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"
}

# authed PORT: a connection in CONN that has authenticated (0), or 1.
authed() {
    open_conn "$1" 2>/dev/null || return 1
    send_line "$CONN" "AUTH $PW"
    read_line "$CONN" 5 && [[ $LINE == OK ]]
}

# ---- 1. the reply budget -------------------------------------------------

# attack PORT N K: N connections each pipeline K times "ADD someone new,
# PRINT" and never read; their descriptors in ATTACK.
attack() {
    local i k fd req
    ATTACK=()
    for ((i = 0; i < $2; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$1" 2>/dev/null || break
        ATTACK+=("$fd")
        req=""
        for ((k = 0; k < $3; k++)); do
            req+="ADD n$i-$k N$i-$k 30 $SSN"$'\n'"PRINT"$'\n'
        done
        printf '%s' "$req" >&"$fd"
    done
}

# judge_attack LABEL BUDGET NOTE OP N: what an attack did, from peak,
# bound, base and dropped (the caller's). Budget 0, the control: the peak
# must pass the bound (returns 1). Else the peak stays within it (not
# checked sanitized), the largest holders were dropped and another
# client's COUNT answers OP N (returns 0).
judge_attack() {
    local label=$1 budget=$2 note=$3 op=$4 n=$5 count
    if [[ $budget == 0 ]]; then
        check "$label, none: the attack passes the bound (peak $peak kB > $bound kB)" \
            test "$peak" -gt "$bound"
        return 1
    fi
    (( SANITIZED )) ||
    check "$label $budget: peak RSS $peak kB within $bound kB (base $base kB, $note)" \
        test "$peak" -le "$bound"
    check "$label $budget: the largest holders were dropped (clients_reply_budget $dropped)" \
        test "${dropped:-0}" -gt 0
    converse_str "$SRV_PORT" 'COUNT\nQUIT\n' "$TEST_TMP/count.out" 5
    count=$(head -n 1 "$TEST_TMP/count.out")
    check "$label $budget: another client is served (COUNT $count)" \
        test "$count" "$op" "$n"
    return 0
}

# end_attack LABEL: the attackers' connections (ATTACK) closed, then the
# server stopped, which must exit 0 (sanitized builds get longer).
end_attack() {
    local fd
    for fd in "${ATTACK[@]}"; do close_conn "$fd"; done
    sleep 0.5                           # the writers see the closes
    if (( SANITIZED )); then
        srv_stop "$SRV_PID" TERM 10; STOP_RC=$SRV_RC
    else
        stop_server "$SRV_PID"
    fi
    expect_eq "$1: exit 0" "$STOP_RC" 0
}

# case_budget IO BUDGET: n people preloaded (listing L), 40 attackers.
# Peak RSS above the base (the store and one listing) stays within the
# budget, four listings in flight (one being built, its smaller copy, the
# cache's previous one, one a writer holds before it is charged) and
# 192 KiB per connection (a thread's stack and its session's buffers).
# BUDGET 0 is the control: the same attack without the budget, which must
# pass the bound (else this test could not fail).
case_budget() {
    local io=$1 budget=$2 n=40000 nconn=40 L base bound peak fd
    start_server buffered --io "$io" --max-output-total "$budget" \
        --write-timeout 20 || return
    check "budget $io $budget: preload $n people" preload "$SRV_PORT" 0 "$n" 30
    L=$(print_of "$n" | wc -c)
    converse_str "$SRV_PORT" 'PRINT\nQUIT\n' "$TEST_TMP/one.out" 10
    base=$(hwm_kb "$SRV_PID")
    bound=$(( base + ${budget%m} * 1024 + 4 * L / 1024 + nconn * 192 ))
    attack "$SRV_PORT" "$nconn" 8
    sleep $(( SANITIZED ? 10 : 2 ))
    peak=$(hwm_kb "$SRV_PID")
    stats_new "$SRV_PORT" clients_reply_budget
    local dropped=$STAT
    if judge_attack "budget $io" "$budget" "listing $((L / 1024)) kB" -gt "$n"
    then
        log_wait "$SRV_ERR" "more replies than --max-output-total" 2
        check "budget $io $budget: the log says why" test $? -eq 0
    fi
    end_attack "budget $io $budget"
}

# tree_attack PORT N K: N connections each pipeline K "TREE 10" and never
# read; their descriptors in ATTACK.
tree_attack() {
    local i fd req=""
    ATTACK=()
    for ((i = 0; i < $3; i++)); do req+="TREE 10"$'\n'; done
    for ((i = 0; i < $2; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$1" 2>/dev/null || break
        ATTACK+=("$fd")
        printf '%s' "$req" >&"$fd"
    done
}

# case_tree_budget IO BUDGET: TREE's replies are charged as PRINT's are.
# 30 attackers pipeline 32 TREE 10 each (a drawing of 186 KiB) and never
# read: 5.8 MiB each, more than the kernel takes into a socket (its send
# buffer grows to tcp_wmem's most, 4 MiB on Debian, about 22 drawings),
# so that each writer is left holding one. Peak RSS above the base stays
# within the budget, the drawings being made (two at most: tree.c, a
# snapshot of 213 KiB and its text each) and 64 KiB per connection (a
# busy thread's stack and its session's buffers). Before, each waiting
# TREE held its snapshot, its session's grown reply buffer and its
# slice's latency histograms (metrics.h), about 600 KiB, none of it
# charged: 500 attackers took the server to 324 MB with a 16 MB budget,
# and another client's COUNT waited 2 s. BUDGET 0 is the control: the
# same attack passes the bound without a budget (each writer holds its
# drawing, 5.4 MiB in all against a bound 2.7 MiB above the base), so the
# bound can fail; it is given until the kernel's buffers are full.
case_tree_budget() {
    local io=$1 budget=$2 n=4000 nconn=30 T base bound peak fd i
    start_server buffered --io "$io" --max-output-total "$budget" \
        --max-output 1m --write-timeout 20 || return
    check "tree $io $budget: preload $n people" preload "$SRV_PORT" 0 "$n" 30
    converse_str "$SRV_PORT" 'TREE 10\nQUIT\n' "$TEST_TMP/tree.out" 10
    T=$(( $(wc -c <"$TEST_TMP/tree.out") - 4 ))     # less "Bye\n"
    base=$(hwm_kb "$SRV_PID")
    bound=$(( base + ${budget%m} * 1024 + 2 * (213 + T / 1024) + nconn * 64 ))
    tree_attack "$SRV_PORT" "$nconn" 32
    sleep 2
    STAT=""
    # Until the first drops (a sanitizer's build draws slowly), or for
    # the control until the peak passes the bound.
    for ((i = 0; i < (SANITIZED ? 60 : 10); i++)); do
        if [[ $budget == 0 ]]; then
            (( $(hwm_kb "$SRV_PID") > bound )) && break
        else
            stats_new "$SRV_PORT" clients_reply_budget
            (( ${STAT:-0} > 0 )) && break
        fi
        sleep 1
    done
    peak=$(hwm_kb "$SRV_PID")
    local dropped=${STAT:-0}
    judge_attack "tree $io" "$budget" "TREE 10 $((T / 1024)) kB" -eq "$n"
    end_attack "tree $io $budget"
}

# case_waiters: 60 clients pipeline 30 CHECKs each (an O(n) walk under the
# store lock, a one-line reply), so that most of their sessions wait for
# the lock at once (--io threads: a session thread each). Peak RSS above
# the base stays within 64 KiB per connection. Before, each session held
# its slice's latency histograms (138 KiB, metrics.h) while it waited, and
# the sets stayed made: 9 MB here, 78 MB with 500 clients.
case_waiters() {
    local io=threads n=$(( SANITIZED ? 4000 : 20000 )) nconn=60 base bound
    local peak fd i req=""
    start_server buffered --io "$io" || return
    check "waiters $io: preload $n people" preload "$SRV_PORT" 0 "$n" 30
    converse_str "$SRV_PORT" 'CHECK\nQUIT\n' "$TEST_TMP/check.out" 10
    base=$(hwm_kb "$SRV_PID")
    bound=$(( base + nconn * 64 ))
    for ((i = 0; i < 30; i++)); do req+="CHECK"$'\n'; done
    ATTACK=()
    for ((i = 0; i < nconn; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$SRV_PORT" 2>/dev/null || break
        ATTACK+=("$fd")
        printf '%s' "$req" >&"$fd"
    done
    sleep $(( SANITIZED ? 10 : 3 ))
    peak=$(hwm_kb "$SRV_PID")
    (( SANITIZED )) ||
    check "waiters $io: peak RSS $peak kB within $bound kB (base $base kB)" \
        test "$peak" -le "$bound"
    for fd in "${ATTACK[@]}"; do close_conn "$fd"; done
    for ((i = 0; i < 100; i++)); do     # their sessions end (20 s at most)
        stats_new "$SRV_PORT" connections_current
        [[ $STAT == 1 ]] && break
        sleep 0.2
    done
    if (( SANITIZED )); then
        srv_stop "$SRV_PID" TERM 10; STOP_RC=$SRV_RC
    else
        stop_server "$SRV_PID"
    fi
    expect_eq "waiters $io: exit 0" "$STOP_RC" 0
}

# ---- 2. guessing ---------------------------------------------------------

case_guesses() {
    local io=$1 fd t0 ms lines ok_fd
    local w=()
    [[ $io == events ]] && w=(--workers 1)
    start_server buffered --io "$io" "${w[@]}" --password-file "$PWFILE" ||
        return
    authed "$SRV_PORT" || { not_ok "guesses $io: AUTH with the password"; return; }
    ok_fd=$CONN
    open_conn "$SRV_PORT"; fd=$CONN
    mark t0
    for ((i = 0; i < 1000; i++)); do printf 'AUTH guess%d\n' "$i"; done >&"$fd"
    # While the guesser waits for its answer, another client of the same
    # (only) worker is answered at once: the delay never blocks a worker.
    send_line "$ok_fd" COUNT
    read_line "$ok_fd" 2; ms_since "$t0"
    expect_eq "guesses $io: another client's COUNT meanwhile" "$LINE" 0
    check "guesses $io: ... answered within 200 ms of the guesses (${MS} ms)" \
        test "$MS" -le 200
    timeout 10 cat <&"$fd" >"$TEST_TMP/guess.out"
    ms_since "$t0"; ms=$MS
    lines=$(grep -c '^Error: invalid password' "$TEST_TMP/guess.out")
    expect_eq "guesses $io: 1000 pipelined guesses get 3 answers, then the close" \
        "$lines" 3
    expect_match "guesses $io: the third says the connection closes" \
        "$(tail -n 1 "$TEST_TMP/guess.out")" 'closing the connection'
    check "guesses $io: 3 guesses took at least 1750 ms (${ms} ms): under 2 a second" \
        test "$ms" -ge 1750
    close_conn "$fd"
    stats_fd "$ok_fd" auth_failures
    expect_eq "guesses $io: STATS auth_failures" "$STAT" 3
    stats_fd "$ok_fd" auth_closed
    expect_eq "guesses $io: STATS auth_closed" "$STAT" 1
    # The right password still works on a new connection.
    authed "$SRV_PORT"
    check "guesses $io: the password still works" test "$LINE" = OK
    close_conn "$CONN"
    close_conn "$ok_fd"
    stop_server "$SRV_PID"
}

# A guesser that hangs up when an answer is late (a right password was
# answered at once, a wrong one late) must learn nothing: once an address
# has failed more than a few times, the right password from it waits too.
case_source_penalty() {
    local io=$1 fds=() fd i t0
    start_server buffered --io "$io" --password-file "$PWFILE" || return
    open_conn "$SRV_PORT"; fd=$CONN
    mark t0
    send_line "$fd" "AUTH $PW"
    read_line "$fd" 3; ms_since "$t0"
    check "penalty $io: a fresh address's right password is answered at once (${MS} ms)" \
        test "$LINE" = OK -a "$MS" -lt 200
    close_conn "$fd"
    # Eight guesses, one per connection, each abandoned after 20 ms.
    for ((i = 0; i < 8; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$SRV_PORT" || break
        printf 'AUTH guess%d\n' "$i" >&"$fd"
        fds+=("$fd")
    done
    sleep 0.05
    for fd in "${fds[@]}"; do close_conn "$fd"; done
    open_conn "$SRV_PORT"; fd=$CONN
    mark t0
    send_line "$fd" "AUTH $PW"
    read_line "$fd" 3; ms_since "$t0"
    expect_eq "penalty $io: after 8 abandoned guesses the right password still works" \
        "$LINE" OK
    check "penalty $io: ... but its answer waits like a wrong one's (${MS} ms >= 200)" \
        test "$MS" -ge 200
    close_conn "$fd"
    stop_server "$SRV_PID"
}

# ---- 3. the log ------------------------------------------------------------

case_log_flood() {
    local fds=() fd i lines t0
    start_server buffered --password-file "$PWFILE" || return
    mark t0
    # One guess a connection: each is answered after its first delay, not
    # a connection's three in turn (seconds, the address's penalty growing).
    for ((i = 0; i < 90; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$SRV_PORT" 2>/dev/null || break
        fds+=("$fd")
        printf 'AUTH a%d\n' "$i" >&"$fd"
    done
    for fd in "${fds[@]}"; do read_line "$fd" 5; done
    ms_since "$t0"
    sleep 0.4                           # the log writer's period
    lines=$(grep -c 'authentication failed' "$SRV_ERR")
    # 90 failures from one address: a line a second, +1 for a second
    # boundary crossed.
    check "log: 90 wrong AUTHs from one address in ${MS} ms wrote $lines lines (<= $(( MS / 1000 + 2 )))" \
        test "$lines" -le $(( MS / 1000 + 2 ))
    authed "$SRV_PORT"
    stats_fd "$CONN" log_lines_suppressed
    check "log: the rest are counted (log_lines_suppressed $STAT)" \
        test "${STAT:-0}" -ge $(( 90 - lines ))
    close_conn "$CONN"
    # The next failure from that address, a second later, says how many.
    sleep 1.1
    converse_str "$SRV_PORT" 'AUTH wrong\nQUIT\n' "$TEST_TMP/late.out" 5
    log_wait "$SRV_ERR" 'such lines from 127.0.0.1 held back' 2
    check "log: the next line from that address says how many were held back" \
        test $? -eq 0
    for fd in "${fds[@]}"; do close_conn "$fd"; done
    stop_server "$SRV_PID"
}

# ---- 4. unauthenticated connections ----------------------------------------

case_unauth_cap() {
    local io=$1 n=1024 fds=() fd i low
    if (( $(ulimit -n) < n + 100 )) && ! ulimit -n $((n + 100)) 2>/dev/null; then
        not_ok "unauth $io: raise the open-file limit to $((n + 100))"
        return
    fi
    start_server coarse --io "$io" --password-file "$PWFILE" || return
    # Bash's read -t needs a descriptor below 1024 (select): one is kept
    # aside for the client with the password.
    exec {low}</dev/null
    for ((i = 0; i < n; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$SRV_PORT" 2>/dev/null || break
        fds+=("$fd")
    done
    expect_eq "unauth $io: $n connections that never authenticate" \
        "${#fds[@]}" "$n"
    eval "exec $low<>/dev/tcp/127.0.0.1/$SRV_PORT"
    CONN=$low
    send_line "$CONN" "AUTH $PW"
    read_line "$CONN" $(( SANITIZED ? 30 : 5 ))
    check "unauth $io: a client with the password is admitted (AUTH: $LINE)" \
        test "$LINE" = OK
    send_line "$CONN" COUNT
    read_line "$CONN" 5
    expect_eq "unauth $io: ... and served (coarse: its session lock after AUTH)" \
        "$LINE" 0
    # Those dropped count until their threads have ended them: a moment.
    for ((i = 0; i < 30; i++)); do
        stats_fd "$CONN" connections_unauth
        (( ${STAT:-999} <= 256 )) && break
        sleep 0.1
    done
    check "unauth $io: at most --max-unauth (256) wait (connections_unauth $STAT)" \
        test "${STAT:-999}" -le 256
    stats_fd "$CONN" clients_unauth_dropped
    check "unauth $io: the oldest were dropped (clients_unauth_dropped $STAT)" \
        test "${STAT:-0}" -ge $(( n - 256 ))
    close_conn "$CONN"
    for fd in "${fds[@]}"; do close_conn "$fd"; done
    stop_server "$SRV_PID"
}

# A flood of unauthenticated connections from one address pushes out its
# own, not the oldest of another address: a client of 127.0.0.1 connected
# before 300 from 127.0.0.2 (python3 binds the source) still gets in.
case_unauth_fair() {
    local io=$1 keep flood
    if ! command -v python3 >/dev/null; then
        not_ok "unauth fair $io: python3 (to connect from 127.0.0.2)"
        return
    fi
    start_server buffered --io "$io" --password-file "$PWFILE" || return
    authed "$SRV_PORT" || { not_ok "unauth fair $io: AUTH"; return; }
    local ctl=$CONN
    open_conn "$SRV_PORT"; keep=$CONN
    timeout 30 python3 -c '
import socket, sys, time
held = []
for i in range(300):
    s = socket.socket()
    s.bind(("127.0.0.2", 0))
    s.connect(("127.0.0.1", int(sys.argv[1])))
    held.append(s)
time.sleep(int(sys.argv[2]))' "$SRV_PORT" $(( SANITIZED ? 25 : 4 )) &
    flood=$!
    for ((i = 0; i < (SANITIZED ? 200 : 50); i++)); do
        stats_fd "$ctl" clients_unauth_dropped
        (( ${STAT:-0} >= 44 )) && break
        sleep 0.1
    done
    check "unauth fair $io: the flood's own were dropped (clients_unauth_dropped $STAT)" \
        test "${STAT:-0}" -ge 44
    send_line "$keep" "AUTH $PW"
    read_line "$keep" 5
    expect_eq "unauth fair $io: the oldest connection, of another address, survives 300 from 127.0.0.2" \
        "$LINE" OK
    kill "$flood" 2>/dev/null; wait "$flood" 2>/dev/null
    close_conn "$keep"
    close_conn "$ctl"
    stop_server "$SRV_PID"
}

# Connections that each send one wrong AUTH and never read wait out its
# answer's delay (250 ms and more). One dropped past --max-unauth leaves
# --max-clients at once and its delay ends (conns_drop_locked): 45 of
# them against -m 40 (--max-unauth 10) leave room for a client with the
# password from another address, and the server's descriptors stay within
# -m and the -m / 8 on their way out. Before, the dropped ones counted
# until their delays ended and that client got "too many connections".
case_unauth_wrong_flood() {
    local io=$1 out fds
    if ! command -v python3 >/dev/null; then
        not_ok "wrong-AUTH flood $io: python3 (to connect from 127.0.0.2)"
        return
    fi
    start_server buffered --io "$io" --password-file "$PWFILE" -m 40 || return
    out=$(timeout 30 python3 -c '
import os, socket, sys, time
port, pw, pid = int(sys.argv[1]), sys.argv[2].encode(), sys.argv[3]
flood = []
for i in range(45):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"AUTH wrong\n")
    flood.append(s)
time.sleep(0.05)
c = socket.socket()
c.bind(("127.0.0.2", 0))
c.settimeout(5)
c.connect(("127.0.0.1", port))
c.sendall(b"AUTH " + pw + b"\nCOUNT\n")
got = b""
try:
    while got.count(b"\n") < 2:
        d = c.recv(100)
        if not d:
            break
        got += d
except OSError:
    pass
print(got.decode(errors="replace").replace("\n", "|"),
      len(os.listdir("/proc/%s/fd" % pid)))' "$SRV_PORT" "$PW" "$SRV_PID")
    expect_eq "wrong-AUTH flood $io: the client with the password gets in past 45 of them" \
        "${out% *}" "OK|0|"
    fds=${out##* }
    check "wrong-AUTH flood $io: descriptors within -m 40 and 5 on their way out ($fds)" \
        test "${fds:-999}" -le 56
    # Ten still wait out their delays (up to 2 s): a stop ends them.
    stop_server "$SRV_PID"
    expect_eq "wrong-AUTH flood $io: SIGTERM during their delays exits 0" \
        "$STOP_RC" 0
}

# serial and coarse: one connection idles before AUTH; others are served.
case_admission() {
    local mode=$1 io=$2 idle
    start_server "$mode" --io "$io" --password-file "$PWFILE" || return
    open_conn "$SRV_PORT"; idle=$CONN
    send_line "$idle" HELP
    read_line "$idle" 2
    authed "$SRV_PORT"
    check "admission $mode $io: served while another idles before AUTH" \
        test "$LINE" = OK
    close_conn "$CONN"
    close_conn "$idle"
    stop_server "$SRV_PID"
}

case_grace() {
    local io=$1 idle t0
    start_server buffered --io "$io" --password-file "$PWFILE" \
        --login-grace 1 || return
    authed "$SRV_PORT"
    local good=$CONN
    open_conn "$SRV_PORT"; idle=$CONN
    mark t0
    wait_eof "$idle" 5
    check "grace $io: a connection that does not authenticate is closed" \
        test $? -eq 0
    ms_since "$t0"
    check "grace $io: ... after 1 to 3 s (${MS} ms)" \
        test "$MS" -ge 900 -a "$MS" -le 3000
    stats_fd "$good" clients_login_timeout
    expect_eq "grace $io: STATS clients_login_timeout" "$STAT" 1
    send_line "$good" COUNT
    read_line "$good" 2
    expect_eq "grace $io: the authenticated one stays" "$LINE" 0
    close_conn "$good"
    close_conn "$idle"
    stop_server "$SRV_PID"
}

# case_grace_quit: clients without the password that pipeline HELPs, then
# QUIT, and never read (a 4 KiB receive buffer), sixteen sizes around what
# fills the sockets so that some are left with Bye queued: each is still
# closed by --login-grace, and none is left on its way out. Before, a QUIT
# freed such a connection's place as if it had authenticated, and --login-
# grace no longer applied to it: it held one of the places of those on
# their way out until --write-timeout (60 s), two or three of the 16.
case_grace_quit() {
    local io=events pid i
    start_server buffered --io "$io" --password-file "$PWFILE" \
        --login-grace 1 -m 64 || return
    timeout 20 python3 -c '
import socket, sys, time
port, socks = int(sys.argv[1]), []
for n in range(3500, 4300, 50):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    s.sendall(b"HELP\n" * n + b"QUIT\n")
    socks.append(s)
time.sleep(3.5)                 # the grace, its check and the 2 s linger
print("ready", flush=True)
time.sleep(15)                  # open until the shell has looked' \
        "$SRV_PORT" >"$TEST_TMP/grace_quit" 2>&1 &
    pid=$!
    for ((i = 0; i < 100; i++)); do
        grep -q ready "$TEST_TMP/grace_quit" && break
        sleep 0.1
    done
    expect_eq "grace_quit $io: 16 clients pipelined HELPs and QUIT" \
        "$(cat "$TEST_TMP/grace_quit")" ready
    authed "$SRV_PORT"
    stats_fd "$CONN" connections_lingering
    expect_eq "grace_quit $io: none left on its way out (connections_lingering)" \
        "$STAT" 0
    stats_fd "$CONN" connections_unauth
    expect_eq "grace_quit $io: none left unauthenticated" "$STAT" 0
    close_conn "$CONN"
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    stop_server "$SRV_PID"
}

# ---- main --------------------------------------------------------------------

for io in threads events; do
    case_budget "$io" 8m
    case_tree_budget "$io" 4m
    case_guesses "$io"
    case_source_penalty "$io"
    case_unauth_cap "$io"
    case_unauth_fair "$io"
    case_unauth_wrong_flood "$io"
    for m in serial coarse; do case_admission "$m" "$io"; done
    case_grace "$io"
done
(( SANITIZED )) || case_budget threads 0
(( SANITIZED )) || case_tree_budget threads 0
(( SANITIZED )) || case_tree_budget events 0
case_grace_quit
case_waiters
case_log_flood
finish
