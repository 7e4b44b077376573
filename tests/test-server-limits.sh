#!/bin/bash
# test-server-limits.sh -- the server's limits and fairness (the "Limits and
# fairness" issue), each finding as checks that fail on the server before
# them (b0830e8; all but 4, see case_fairness):
#   1. descriptors: --max-clients lowered to fit the open-file limit at
#      start-up; EMFILE at run time pauses accepting (no spinning, one log
#      line per episode) and accepting resumes when descriptors free up;
#   2. --max-output: a PRINT over it gets one error line and a close;
#   3. buffered PRINT's listing is shared: 40 clients that do not read cost
#      little memory, and others are still served;
#   4. the store lock is fair (bounded): one client's pipelined batch does not starve
#      another (fine, buffered);
#   5. QUIT with more bytes pipelined after it: no reset eats the replies;
#      nor a refusal's line, for a client that sent before it was refused;
#   6. --timeout and --write-timeout end idle and non-reading clients;
#   7. SIGUSR1 logs STATS, SIGHUP reopens --log-file;
#   8. 2000 idle connections with the usual soft limit of 1024 descriptors
#      (the server raises it), then SIGTERM exits 0 at once;
#   9. at most -m / 8 (at least 4) connections linger after QUIT at once; ended
#      session threads are joined.
# Stores are scaled down and preloaded over TCP. Every server runs on
# 127.0.0.1 port 0 and is stopped by PID (tests/lib/server.sh).
# run-all: beside
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

SSN=123-45-6789

source "$(dirname "${BASH_SOURCE[0]}")/lib/limits.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/metrics.sh"

# ---- 1. descriptors --------------------------------------------------------

# 1a. Started with 64 descriptors and -m 1000, the server cannot keep 1000
# clients: it lowers --max-clients and says so, and the client past the
# lowered limit is refused cleanly.
case_fd_startup() {
    local wrap="prlimit --nofile=64:64" k i fds=() served=0
    # Root with CAP_SYS_RESOURCE may raise its own hard limit and would not
    # need to lower anything: run the server without that capability.
    if [[ $EUID -eq 0 ]] && command -v setpriv >/dev/null; then
        wrap+=" setpriv --bounding-set=-sys_resource"
    fi
    start_under "$wrap" fine -m 1000 || return
    if log_wait "$SRV_ERR" 'max-clients lowered from 1000 to [0-9]+' 2; then
        k=$(grep -oE 'lowered from 1000 to [0-9]+' "$SRV_ERR" | head -n 1)
        k=${k##* }
        ok "nofile 64, -m 1000: the log says --max-clients was lowered (to $k)"
    else
        not_ok "nofile 64, -m 1000: the log says --max-clients was lowered"
        head -n 5 "$SRV_ERR" | sed 's/^/#   log: /'
        stop_server "$SRV_PID"
        return
    fi
    check "the lowered limit ($k) fits 64 descriptors" test "$k" -ge 1 -a "$k" -lt 64
    for ((i = 0; i < k; i++)); do
        open_conn "$SRV_PORT" 2>/dev/null || break
        fds+=("$CONN")
        send_line "$CONN" COUNT
        read_line "$CONN" 3 && [[ $LINE == 0 ]] && served=$((served + 1))
    done
    expect_eq "all $k clients within the lowered limit are served" "$served" "$k"
    stats_fd "${fds[0]}" max_clients
    expect_eq "STATS max_clients shows the lowered limit" "$STAT" "$k"
    open_conn "$SRV_PORT"
    read_line "$CONN" 3
    expect_eq "client $((k + 1)) gets 'too many connections'" "$LINE" \
        "Error: too many connections"
    check "and is then disconnected" wait_eof "$CONN" 2
    close_conn "$CONN"
    stats_fd "${fds[0]}" connections_rejected
    expect_eq "STATS connections_rejected 1" "$STAT" 1
    for i in "${fds[@]}"; do close_conn "$i"; done
    stop_server "$SRV_PID"
    expect_eq "the lowered server exits 0 on SIGTERM" "$STOP_RC" 0
}

# 1b. Out of descriptors at run time: accept fails with EMFILE and the
# listening socket stays readable. The old server retried at once, spinning
# a core and logging every failure; now it backs off (10 ms doubling to
# 1 s) and logs once per episode.
case_fd_runtime() {
    local ctl fds=() used room i c0 c1 n ms
    start_server fine || return
    open_conn "$SRV_PORT"; ctl=$CONN
    send_line "$ctl" COUNT
    read_line "$ctl" 3
    if ! prlimit --pid "$SRV_PID" --nofile=40:40; then
        not_ok "prlimit --pid lowers the server's open-file limit"
        close_conn "$ctl"; stop_server "$SRV_PID"; return
    fi
    used=$(ls "/proc/$SRV_PID/fd" | wc -l)
    room=$((40 - used))
    # 10 more than fit: those stay in the backlog, accept() failing.
    for ((i = 0; i < room + 10; i++)); do
        open_conn "$SRV_PORT" 2>/dev/null || break
        fds+=("$CONN")
    done
    if log_wait "$SRV_ERR" 'accept failed' 3; then
        ok "nofile 40 ($used in use), $((room + 10)) clients: the log says accept failed"
    else
        not_ok "nofile 40 ($used in use), $((room + 10)) clients: the log says accept failed"
    fi
    sleep 0.2                   # the accepted ones have started
    c0=$(cpu_ticks "$SRV_PID")
    sleep 2
    c1=$(cpu_ticks "$SRV_PID")
    # A spinning accept loop burns ~200 ticks (a whole core) in 2 s; the
    # back-off retries about 8 times. 10 ticks (0.1 s of CPU) leaves room
    # for a busy machine's accounting, far from a spin.
    check "out of descriptors: CPU time grows by $((c1 - c0)) ticks in 2 s (<= 10)" \
        test $((c1 - c0)) -le 10
    n=$(grep -c 'accept failed' "$SRV_ERR")
    check "out of descriptors: 'accept failed' logged $n times (<= 2)" test "$n" -le 2
    stats_fd "$ctl" accept_fd_exhausted
    check "STATS accept_fd_exhausted >= 1 (got '$STAT')" test "${STAT:-0}" -ge 1
    for i in "${fds[@]}"; do close_conn "$i"; done
    # Descriptors free up; the next retry (at most 1 s away) accepts again.
    local t0
    mark t0
    open_conn "$SRV_PORT"
    send_line "$CONN" COUNT
    read_line "$CONN" 4
    ms_since "$t0"
    expect_eq "after the clients close, a new client is served (${MS} ms)" "$LINE" 0
    close_conn "$CONN"
    check "the log says accepting again" log_wait "$SRV_ERR" 'accepting again' 2
    close_conn "$ctl"
    stop_server "$SRV_PID"
    expect_eq "the server exits 0 on SIGTERM after the episode" "$STOP_RC" 0
}

# ---- 2. output limit -------------------------------------------------------

# Buffered mode builds PRINT whole before sending: with --max-output 64k a
# listing of 3000 people (about 150 KB) is refused with one line and the
# client disconnected. (The streamed modes never hold more than a buffer.)
case_output_limit() {
    local port out=$TEST_TMP/limit.out
    start_server buffered --max-output 64k || return
    port=$SRV_PORT
    check "max-output: preload 300 people" preload "$port" 0 300
    converse_str "$port" 'PRINT\nQUIT\n' "$out"
    { print_of 300; echo Bye; } >"$TEST_TMP/limit.exp"
    expect_file "max-output 64k: a PRINT of 300 people (15 KB) is whole" \
        "$out" "$TEST_TMP/limit.exp"
    check "max-output: preload 2700 more" preload "$port" 300 3000
    : >"$out"
    converse_str "$port" 'PRINT\nCOUNT\n' "$out" 5
    local rc=$?
    expect_eq "max-output 64k: a PRINT of 3000 people gets exactly the error" \
        "$(cat -A "$out")" 'Error: output limit exceeded$'
    expect_eq "and the server closes the connection (converse rc)" "$rc" 0
    stats_new "$port" clients_output_limited
    expect_eq "STATS clients_output_limited 1" "$STAT" 1
    check "the log names the output limit" \
        log_wait "$SRV_ERR" 'over the output limit of 65536 bytes' 2
    stop_server "$SRV_PID"
    expect_eq "max-output: exit 0" "$STOP_RC" 0
}

# ---- 3. memory of PRINTs nobody reads --------------------------------------

# Buffered mode, 20000 people (a listing L of ~1 MB), 40 clients each
# sending 3 PRINTs and reading nothing. The old server formatted a copy of
# the listing into each session's buffer for each PRINT: RSS rose to ~49 MB
# within half a second, then fell as the kernel's socket buffers (~4 MB per
# connection here, more than the 3 L asked for) took the copies. Now every
# PRINT sends the one shared, reference-counted listing. So RSS is sampled
# every 20 ms from the first PRINT on, and its peak is what is checked.
case_memory() {
    local port fds=() i base bound L t0 fd
    local nconn=40 n=20000
    start_server buffered || return
    port=$SRV_PORT
    check "memory: preload $n people" preload "$port" 0 "$n" 20
    L=$(print_of "$n" | wc -c)
    base=$(rss_kb "$SRV_PID")
    # The bound, above the RSS after the preload: the shared listing is
    # built under the lock by doubling its buffer, so at most the listing,
    # its last smaller copy and the cache's previous one live at once (< 3L;
    # we allow 4L); each connection adds at most its thread's stack (128
    # KiB, SESSION_STACK) and its session (16 KiB line reader, 4 KiB reply
    # buffer, a digest context), under 192 KiB. That is ~4 + 7.5 MB, while
    # one copy per PRINT would be 40 x 3 x L = 120 MB, and one per session
    # 40 MB.
    bound=$(( base + 4 * L / 1024 + nconn * 192 ))
    for ((i = 0; i < nconn; i++)); do
        open_conn "$port" 2>/dev/null || break
        fds+=("$CONN")
        printf 'PRINT\nPRINT\nPRINT\nQUIT\n' >&"$CONN"
    done
    expect_eq "memory: $nconn connections opened" "${#fds[@]}" "$nconn"
    RSS_MAX=0
    rss_watch "$SRV_PID" 0.3
    # Another client is answered while the 40 are being served.
    open_conn "$port"; fd=$CONN
    mark t0
    send_line "$fd" COUNT
    read_line "$fd" 1
    ms_since "$t0"
    expect_eq "memory: another client's COUNT is answered within 1 s (${MS} ms)" \
        "$LINE" "$n"
    close_conn "$fd"
    rss_watch "$SRV_PID" 1.5
    check "memory: peak RSS $RSS_MAX kB stays under $bound kB (base $base kB, listing $((L / 1024)) kB)" \
        test "$RSS_MAX" -lt "$bound"
    # The PRINTs did run: the first client, read at last, gets 3 whole
    # listings and its Bye.
    timeout 10 cat <&"${fds[0]}" >"$TEST_TMP/mem.out"
    expect_eq "memory: a client that reads at last gets 3 listings and Bye" \
        "$(wc -c <"$TEST_TMP/mem.out")" $((3 * L + 4))
    for fd in "${fds[@]}"; do close_conn "$fd"; done
    stop_server "$SRV_PID"
    expect_eq "memory: exit 0" "$STOP_RC" 0
}

# ---- 4. fairness -----------------------------------------------------------

# --race-window 2000: each ADD holds the store lock ~2 ms. A pipelines 400
# ADDs (one read, one batch); B then asks one FIND. A plain mutex may let
# A's thread take the lock back before B's wakes, and B wait for A's whole
# batch; the store lock's bounded order lets others pass B for at most
# 100 us of holding in all, which the ADD B queued behind has spent alone
# (the FIFO order of before: one ADD too). (On a 2-core
# Linux 6.18 machine the old plain mutex was not starved this way either:
# B got its answer in 1 to 46 ms over 30 runs, against 1 to 6 ms with the
# FIFO lock. So this guards the hand-off more than it proves it.)
case_fairness() {
    local mode=$1 a b t0 tb ta got=0 i
    start_server "$mode" --race-window 2000 || return
    check "$mode fairness: preload 10 people" preload "$SRV_PORT" 0 10
    awk 'BEGIN { for (i = 0; i < 400; i++)
        printf "ADD g%d M%d 40 111-22-3333\n", i, i }' >"$TEST_TMP/fair.req"
    open_conn "$SRV_PORT"; a=$CONN
    open_conn "$SRV_PORT"; b=$CONN
    for i in "$a" "$b"; do              # both sessions running
        send_line "$i" COUNT
        read_line "$i" 3
    done
    mark t0
    cat "$TEST_TMP/fair.req" >&"$a"     # one write of 12 KB
    sleep 0.02                          # A's batch is under way
    mark tb
    send_line "$b" "FIND f7 L7"
    read_line "$b" 5
    ms_since "$tb"; tb=$MS
    expect_eq "$mode fairness: B's FIND is answered" "$LINE" \
        "$(print_line f7 L7 30 "$SSN")"
    while ((got < 400)) && read_line "$a" 10 && [[ $LINE == OK ]]; do
        got=$((got + 1))
    done
    ms_since "$t0"; ta=$MS
    expect_eq "$mode fairness: A's 400 ADDs all OK" "$got" 400
    check "$mode fairness: A's batch takes >= 800 ms (${ta} ms)" test "$ta" -ge 800
    check "$mode fairness: B is answered within 300 ms (${tb} ms), not after A's batch" \
        test "$tb" -le 300
    close_conn "$a"; close_conn "$b"
    stop_server "$SRV_PID"
}

# ---- 5. QUIT with more bytes after it ---------------------------------------

# converse_late PORT REQ OUT: converse, but the reader starts 0.2 s late,
# so the replies fill the socket buffers and part of them is still in the
# server's send queue when it is done with the session.
converse_late() {
    timeout 10 bash -c '
        exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 97
        { sleep 0.2; cat <&3 >"$3"; } &
        cat "$2" >&3 2>/dev/null
        wait $!' _ "$1" "$2" "$3" 2>/dev/null
}

# 'PRINT\nQUIT\n' and ~300 KB more in one go. Closing with unread input
# makes the kernel send a reset, which throws away what is still in the
# send queue: the old server lost the PRINT's end and the Bye (in every
# run with a late reader, in most with a prompt one). The server must shut
# down its side and drain its input before closing.
case_quit_pipelined() {
    local mode=$1 req=$TEST_TMP/quit.req out=$TEST_TMP/quit-$1.out
    start_server "$mode" || return
    check "$mode quit: preload 3000 people" preload "$SRV_PORT" 0 3000
    [[ -s $TEST_TMP/quit.exp ]] || { print_of 3000; echo Bye; } >"$TEST_TMP/quit.exp"
    if [[ ! -s $req ]]; then
        { printf 'PRINT\nQUIT\n'
          awk 'BEGIN { for (i = 0; i < 10000; i++)
              printf "ADD late%d After%d 1 000-00-0000\n", i, i }'; } >"$req"
    fi
    converse_late "$SRV_PORT" "$req" "$out"
    expect_file "$mode: PRINT then QUIT with $(( $(wc -c <"$req") / 1024 )) KB after: whole PRINT and Bye" \
        "$out" "$TEST_TMP/quit.exp"
    converse_str "$SRV_PORT" 'COUNT\nQUIT\n' "$out"
    expect_eq "$mode quit: nothing after QUIT was run" "$(head -n 1 "$out")" 3000
    stop_server "$SRV_PID"
}

# A client refused for --max-clients that has already sent 8 KB of
# requests: the server reads that input (up to 64 KB, REFUSE_DRAIN) before
# it closes, so the refusal line ends with a FIN and no reset. Linux keeps
# the line it has received when a reset comes after it, but a reset throws
# away the server's copy, which a lossy network needs resent; the client
# sees the reset in its socket's state: CLOSE (7) after one, CLOSE_WAIT (8)
# after a plain FIN. The server is stopped while the client connects and
# writes, so that the input is there when it refuses, as under load.
case_refuse_pipelined() {
    if ! command -v python3 >/dev/null; then
        not_ok "refused with 8 KB sent: python3 (for the socket's TCP state)"
        return
    fi
    start_server buffered -m 1 || return
    LINE=$(timeout 20 python3 -c '
import os, signal, socket, sys, time
port, pid = int(sys.argv[1]), int(sys.argv[2])
hold = socket.create_connection(("127.0.0.1", port))
hold.settimeout(5)
hold.sendall(b"COUNT\n")
hold.recv(100)                  # in: the one place -m 1 has
os.kill(pid, signal.SIGSTOP)
try:
    c = socket.create_connection(("127.0.0.1", port))
    c.sendall(b"COUNT\n" * 1365)
finally:
    os.kill(pid, signal.SIGCONT)
c.settimeout(5)
got = b""
try:
    while True:
        d = c.recv(100)
        if not d:
            break
        got += d
except OSError as e:
    got += ("[%s]" % e).encode()
time.sleep(0.1)                 # a reset would follow the FIN at once
state = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0]
print(got.decode(errors="replace").replace("\n", "|"),
      {7: "reset", 8: "fin"}.get(state, state))' "$SRV_PORT" "$SRV_PID")
    expect_eq "refused with 8 KB sent: the line, then a close with no reset" \
        "$LINE" "Error: too many connections| fin"
    stop_server "$SRV_PID"
    expect_eq "refused with 8 KB sent: the server exits 0 after" "$STOP_RC" 0
}

# ---- 6. timeouts -------------------------------------------------------------

case_idle_timeout() {
    local fd t0 ms
    start_server fine --timeout 1 || return
    open_conn "$SRV_PORT"; fd=$CONN
    send_line "$fd" COUNT
    read_line "$fd" 3
    mark t0
    if wait_eof "$fd" 3; then
        ms_since "$t0"
        ok "--timeout 1: an idle connection is closed within 3 s (${MS} ms)"
    else
        not_ok "--timeout 1: an idle connection is closed within 3 s"
    fi
    close_conn "$fd"
    stats_new "$SRV_PORT" clients_idle_timeout
    expect_eq "--timeout 1: STATS clients_idle_timeout 1" "$STAT" 1
    check "--timeout 1: the log says so" \
        log_wait "$SRV_ERR" 'idle (connection after|for) 1 s' 2
    # A client that keeps talking is not idle.
    open_conn "$SRV_PORT"; fd=$CONN
    local i n=0
    for ((i = 0; i < 4; i++)); do
        sleep 0.5
        send_line "$fd" COUNT
        read_line "$fd" 2 && [[ $LINE == 0 ]] && n=$((n + 1))
    done
    expect_eq "--timeout 1: a client asking every 0.5 s is kept for 2 s" "$n" 4
    close_conn "$fd"
    stop_server "$SRV_PID"
}

# In coarse mode an idle client holds the store lock: --timeout bounds how
# long the next one waits.
case_coarse_idle() {
    local x y t0 ms
    start_server coarse --timeout 1 || return
    open_conn "$SRV_PORT"; x=$CONN
    send_line "$x" COUNT
    read_line "$x" 3                    # x's session holds the lock
    mark t0
    open_conn "$SRV_PORT"; y=$CONN
    send_line "$y" COUNT
    read_line "$y" 3
    ms_since "$t0"; ms=$MS
    expect_eq "coarse --timeout 1: a client behind an idle one is served within 3 s (${ms} ms)" \
        "$LINE" 0
    check "coarse --timeout 1: the idle first client was closed" wait_eof "$x" 1
    close_conn "$x"; close_conn "$y"
    stop_server "$SRV_PID"
}

# --write-timeout 1, fine mode: PRINT is streamed under the store lock, so a
# client that never reads a listing larger than the socket buffers (200000
# people, ~10 MB) held the lock, and every other client, forever.
case_write_timeout() {
    local n=200000 p q t0 ms
    start_server fine --write-timeout 1 || return
    check "write-timeout: preload $n people" preload "$SRV_PORT" 0 "$n" 30
    open_conn "$SRV_PORT"; p=$CONN
    mark t0
    send_line "$p" PRINT                # and never read
    sleep 0.2
    open_conn "$SRV_PORT"; q=$CONN
    send_line "$q" COUNT
    read_line "$q" 8
    ms_since "$t0"; ms=$MS
    expect_eq "write-timeout 1: another client's COUNT is answered" "$LINE" "$n"
    # Not 1 s: SO_SNDTIMEO times each send() that makes no progress, and
    # the kernel still takes a few more bytes now and then after the client
    # stopped reading (strace: sends went through ~1 s after the buffers
    # first filled), each time starting the 1 s again. We saw 2.1 to 3.2 s
    # here; 6 s keeps clear of that on a loaded machine, and the old
    # server never answered at all.
    check "write-timeout 1: ... within 6 s of the stuck PRINT (${ms} ms)" \
        test "$ms" -le 6000
    # Not vacuous: fine held the lock while the PRINT was stuck.
    check "write-timeout 1: ... and not before the write timed out (${ms} ms >= 900)" \
        test "$ms" -ge 900
    # The session's end is counted after it let go of the lock.
    stats_fd_until "$q" clients_write_timeout 1
    expect_eq "write-timeout 1: STATS clients_write_timeout 1" "$STAT" 1
    check "write-timeout 1: the log says so" \
        log_wait "$SRV_ERR" 'read nothing for 1 s' 2
    close_conn "$p"; close_conn "$q"
    stop_server "$SRV_PID"
}

# ---- 7. signals and --log-file ------------------------------------------------

case_signals() {
    local log=$TEST_TMP/signals.log out=$TEST_TMP/signals.out
    start_server fine --log-file "$log" || return
    check "signals: preload 5 people" preload "$SRV_PORT" 0 5
    srv_signal USR1 "$SRV_PID"
    check "SIGUSR1: the log gets 'stats: entries 5'" log_wait "$log" '^.* stats: entries 5$' 2
    check "SIGUSR1: and the other counters" grep -qE ' stats: connections_total [0-9]+$' "$log"
    converse_str "$SRV_PORT" 'COUNT\nQUIT\n' "$out"
    expect_eq "SIGUSR1: the server keeps serving" "$(head -n 1 "$out")" 5

    mv "$log" "$log.1"
    srv_signal HUP "$SRV_PID"
    check "SIGHUP after mv: the log file is created again" log_wait "$log" 'log file reopened' 2
    srv_signal USR1 "$SRV_PID"
    check "SIGHUP: new lines go to the new file" log_wait "$log" ' stats: entries 5$' 2
    expect_eq "SIGHUP: the moved file gets none of them" \
        "$(grep -c -e 'stats: entries' -e 'reopened' "$log.1")" 1
    converse_str "$SRV_PORT" 'COUNT\nQUIT\n' "$out"
    expect_eq "SIGHUP: the server keeps serving" "$(head -n 1 "$out")" 5

    # The log's name now a FIFO no one reads: the reopen fails at once
    # (it used to block the main thread, so no new connection was served
    # and SIGTERM waited), and the old file goes on.
    mv "$log" "$log.2" && mkfifo -m 600 "$log"
    srv_signal HUP "$SRV_PID"
    check "SIGHUP, the log a FIFO with no reader: the old file says so" \
        log_wait "$log.2" 'cannot reopen .*: No such device or address; still logging to the file it had' 2
    converse_str "$SRV_PORT" 'COUNT\nQUIT\n' "$out"
    expect_eq "SIGHUP, the log a FIFO: a new connection is served" \
        "$(head -n 1 "$out")" 5
    rm -f "$log"
    check "signals: the server is still running" srv_running "$SRV_PID"
    stop_server "$SRV_PID"
    expect_eq "signals: SIGTERM exits 0" "$STOP_RC" 0
    check "signals: the stop is logged in the file it had" grep -q 'stopping' "$log.2"
}

# ---- 8. SIGTERM with many idle connections ---------------------------------

# The server starts with the usual soft limit of 1024 descriptors (the hard
# one is this shell's): -m 3000 makes it raise its own soft limit (the old
# server kept 1024, ran out after ~1000 clients and spun in accept).
case_many_idle() {
    local n=2000 fds=() i t0 ms fd ctl hard lim
    if (( $(ulimit -n) < n + 100 )) && ! ulimit -n $((n + 100)) 2>/dev/null; then
        not_ok "many idle: raise this shell's open-file limit to $((n + 100)) (hard limit $(ulimit -Hn))"
        return
    fi
    hard=$(ulimit -Hn)
    [[ $hard == unlimited ]] && hard=$(cat /proc/sys/fs/nr_open)
    start_under "prlimit --nofile=1024:$hard" fine -m 3000 || return
    lim=$(awk '/^Max open files/ { print $4 }' "/proc/$SRV_PID/limits")
    check "many idle: soft limit 1024, -m 3000: the server raised it to $lim (>= $((n + 100)))" \
        test "${lim:-0}" -ge $((n + 100))
    # STATS goes over a connection opened first, on a low descriptor: bash's
    # read -t uses select(), and aborts on a descriptor past FD_SETSIZE (1024).
    open_conn "$SRV_PORT"; ctl=$CONN
    for ((i = 0; i < n; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$SRV_PORT" 2>/dev/null || break
        fds+=("$fd")
    done
    expect_eq "many idle: $n connections opened" "${#fds[@]}" "$n"
    stats_fd_until "$ctl" connections_current $((n + 1))
    expect_eq "many idle: the server has all of them (connections_current)" \
        "$STAT" $((n + 1))
    mark t0
    srv_signal TERM "$SRV_PID"
    if srv_wait_gone "$SRV_PID" 5; then
        ms_since "$t0"; ms=$MS
        stop_server "$SRV_PID"          # reaps it; STOP_RC its status
        expect_eq "many idle: SIGTERM exit status 0" "$STOP_RC" 0
        check "many idle: SIGTERM with $n idle connections: gone within 2 s (${ms} ms)" \
            test "$ms" -le 2000
    else
        not_ok "many idle: SIGTERM with $n idle connections: gone within 5 s"
        stop_server "$SRV_PID" KILL
    fi
    close_conn "$ctl"
    for fd in "${fds[@]}"; do close_conn "$fd"; done
}

# ---- 9. QUIT and hold ------------------------------------------------------

# After QUIT a connection lingers for up to 2 s, draining what its client
# still sends (case_quit_pipelined), its --max-clients place already free.
# At most -m / 8 linger at once (4 to 64); past that the close comes right
# after Bye. The old server let every one linger, outside any count:
# clients that sent QUIT and held their sockets took a descriptor (and a
# thread) each, thousands a second (-m 100: 11,352 descriptors in 2 s),
# until accept failed for everyone. SIGTERM cuts lingering short.
case_linger_bounded() {
    local io=$1 m=16 n=40 i bye=0 fds=() ctl nfd0 nfd tasks0 tasks t0
    local lm=4                          # -m 16 / 8 is 2, less than 4
    local -a args=(-m "$m" --metrics-port 0)
    [[ $io == events ]] && args+=(--io events)
    start_server fine "${args[@]}" || return
    open_conn "$SRV_PORT"; ctl=$CONN
    send_line "$ctl" COUNT
    read_line "$ctl" 3
    nfd0=$(ls "/proc/$SRV_PID/fd" | wc -l)
    tasks0=$(ls "/proc/$SRV_PID/task" | wc -l)
    for ((i = 0; i < n; i++)); do
        open_conn "$SRV_PORT" 2>/dev/null || break
        fds+=("$CONN")
        send_line "$CONN" QUIT
        read_line "$CONN" 3 && [[ $LINE == Bye ]] && bye=$((bye + 1))
    done
    expect_eq "$io: $n clients QUIT and hold (-m $m): every one gets Bye" "$bye" "$n"
    stats_fd "$ctl" connections_lingering
    expect_eq "$io: $lm of them linger (STATS connections_lingering)" "$STAT" $lm
    stats_fd "$ctl" connections_current
    expect_eq "$io: none counts against -m (connections_current 1)" "$STAT" 1
    scrape "$(metrics_port)" /metrics "$TEST_TMP/metrics"
    expect_eq "$io: /metrics says so too (ssn_connections_lingering)" \
        "$(sample "$TEST_TMP/metrics" ssn_connections_lingering)" $lm
    # Those closed at once may still be ending (their threads exiting):
    # up to 1 s for that, well inside the 2 s the lingering ones hold.
    for ((i = 0; i < 10; i++)); do
        nfd=$(ls "/proc/$SRV_PID/fd" | wc -l)
        tasks=$(ls "/proc/$SRV_PID/task" | wc -l)
        ((nfd <= nfd0 + lm && tasks <= tasks0 + lm)) && break
        sleep 0.1
    done
    check "$io: descriptors $nfd0 -> $nfd (at most $lm more)" \
        test "$nfd" -le $((nfd0 + lm))
    check "$io: threads $tasks0 -> $tasks (at most $lm more)" \
        test "$tasks" -le $((tasks0 + lm))
    # Each lingers 2 s at most.
    sleep 2.5
    stats_fd "$ctl" connections_lingering
    expect_eq "$io: after 2.5 s none lingers" "$STAT" 0
    for i in "${fds[@]}"; do close_conn "$i"; done
    fds=()
    for ((i = 0; i < lm; i++)); do
        open_conn "$SRV_PORT"
        fds+=("$CONN")
        send_line "$CONN" QUIT
        read_line "$CONN" 3
    done
    stats_fd_until "$ctl" connections_lingering $lm
    mark t0
    srv_signal TERM "$SRV_PID"
    if srv_wait_gone "$SRV_PID" 5; then
        ms_since "$t0"
        stop_server "$SRV_PID"
        expect_eq "$io: SIGTERM with $lm lingering: exit status 0" "$STOP_RC" 0
        check "$io: SIGTERM does not wait out the linger (${MS} ms < 1500)" test "$MS" -lt 1500
    else
        not_ok "$io: SIGTERM with $lm lingering: gone within 5 s"
        stop_server "$SRV_PID" KILL
    fi
    close_conn "$ctl"
    for i in "${fds[@]}"; do close_conn "$i"; done
}

# A client that connects again as soon as it has read Bye is served, even
# at -m 1: the place is free before Bye leaves (conns_leaving). Before, it
# was freed only once the session thread had ended its session after the
# send, and 45 of 500 such reconnections (threads; 1 of 500 with events)
# were refused with "too many connections".
case_quit_reconnect() {
    local io=$1 n=300 got
    start_server buffered -m 1 --io "$io" || return
    got=$(timeout 30 python3 -c '
import socket, sys
port, n, refused = int(sys.argv[1]), int(sys.argv[2]), 0
for i in range(n):
    c = socket.create_connection(("127.0.0.1", port))
    c.settimeout(5)
    c.sendall(b"COUNT\nQUIT\n")
    got = b""
    while not got.endswith(b"Bye\n"):
        d = c.recv(4096)
        if not d:
            break
        got += d
    refused += b"too many connections" in got
    c.close()
print(refused)' "$SRV_PORT" "$n")
    expect_eq "$io -m 1: $n clients, each connecting on the last one's Bye: none refused" \
        "$got" 0
    stop_server "$SRV_PID"
}

# Session threads are joinable, joined by the main thread once they end
# (threads.c, threads_reap): one never joined would keep its stack and
# guard page mapped for good, two mappings a connection (600 here; a
# reaped server grows by 8 at most, 86 under ThreadSanitizer's own).
case_threads_reaped() {
    local n=300 i fd a b
    start_server fine || return
    a=$(wc -l <"/proc/$SRV_PID/maps")
    for ((i = 0; i < n; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$SRV_PORT" || break
        printf 'COUNT\nQUIT\n' >&"$fd"
        cat <&"$fd" >/dev/null
        exec {fd}>&-
    done
    sleep 1.2                           # the once-a-second reap
    b=$(wc -l <"/proc/$SRV_PID/maps")
    check "$n connections one after another: the server's mappings $a -> $b (< $a + $((n / 2)))" \
        test "$b" -lt $((a + n / 2))
    stop_server "$SRV_PID"
    expect_eq "reaped: exit status 0 on SIGTERM" "$STOP_RC" 0
}

# ---- main --------------------------------------------------------------------

if [ $# -gt 0 ]; then                   # the cases named, alone
    for c in "$@"; do $c; done
    finish
fi
case_fd_startup
case_fd_runtime
case_output_limit
case_memory
for m in fine buffered; do case_fairness "$m"; done
for m in serial coarse fine buffered; do case_quit_pipelined "$m"; done
case_refuse_pipelined
case_idle_timeout
case_coarse_idle
case_write_timeout
case_signals
case_many_idle
for io in threads events; do case_linger_bounded "$io"; done
for io in threads events; do case_quit_reconnect "$io"; done
case_threads_reaped
finish
