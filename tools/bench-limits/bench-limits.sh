#!/bin/bash
# bench-limits.sh -- starts a server for bin/bench-limits, runs it, stops
# the server by its PID (tests/lib/server.sh: only a PID started here is
# ever signalled). docs/LIMITS.md was measured with it.
#
#   tools/bench-limits/bench-limits.sh [-s SERVER] [-w 'WRAPPER'] [SERVER OPTIONS] \
#       [-- BENCH-LIMITS OPTIONS]
#         SERVER (default $BIN/ssnserver-buffered) is started on 127.0.0.1
#         port 0 with SERVER OPTIONS (under WRAPPER, e.g. 'prlimit
#         --nofile=1024:20000', when given); bench-limits gets --port and
#         --server-pid. The server's exit status and last log lines follow.
#   tools/bench-limits/bench-limits.sh --descriptors [-s SERVER] [SERVER OPTIONS]
#         descriptor exhaustion: the server's open-file limit is lowered to
#         40 (prlimit --pid), 10 clients more than fit connect, and its CPU
#         time and log lines are counted over 3 s; then the clients leave
#         and one more is served.
#   tools/bench-limits/bench-limits.sh --quit RUNS [-s SERVER] [SERVER OPTIONS]
#         QUIT with more data pipelined after it: RUNS conversations of
#         PRINT (3000 people), QUIT and ~300 KB of ADDs in one write, read
#         at once and read 0.2 s late; how many got the whole PRINT and Bye.
#   tools/bench-limits/bench-limits.sh --idle [-s SERVER] [SERVER OPTIONS]
#         a client that asks one COUNT and then idles: how long a second
#         client waits for its COUNT, and how long until the server closes
#         the idle one (each bounded by 5 s).
#
# The server's log goes to a temporary directory, removed at exit unless
# KEEP=1. Exit status: bench-limits' own, or 1 when the server would not
# start.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
BIN=${BIN:-bin}
source tests/lib/server.sh

server=$BIN/ssnserver-buffered
wrap=""
descriptors=0
quit=0
idle=0
srv_args=()
while (($#)); do
    case $1 in
    -s) server=$2; shift 2 ;;
    -w) wrap=$2; shift 2 ;;
    --descriptors) descriptors=1; shift ;;
    --quit) quit=$2; shift 2 ;;
    --idle) idle=1; shift ;;
    --) shift; break ;;
    *) srv_args+=("$1"); shift ;;
    esac
done

tmp=$(mktemp -d /tmp/bench-limits.XXXXXX) || exit 1
cleanup() { [[ ${KEEP:-0} == 1 ]] && echo "# kept $tmp" || rm -rf "$tmp"; }
srv_on_exit cleanup

read -r -a wrapper <<<"$wrap"
if ! srv_start "$tmp/server.out" "$tmp/server.err" 10 "${wrapper[@]}" \
        "$server" -p 0 "${srv_args[@]}"; then
    echo "bench-limits.sh: $server did not start: '$SRV_LINE'" >&2
    sed 's/^/  /' "$tmp/server.err" | head -n 5 >&2
    exit 1
fi
pid=$SRV_PID
echo "# server: ${wrap:+$wrap }$server -p 0 ${srv_args[*]} (pid $pid, port $SRV_PORT)"

# ticks PID: user + system CPU time of the process, in clock ticks.
ticks() {
    local line f
    IFS= read -r line <"/proc/$1/stat" || return 1
    read -r -a f <<<"${line##*) }"
    echo $(( f[11] + f[12] ))
}

descriptor_run() {
    local port=$SRV_PORT fds=() used room i c0 c1 l0 l1 a0 a1 t0 fd line
    exec {ctl}<>"/dev/tcp/127.0.0.1/$port" || return 1
    echo COUNT >&"$ctl"; read -r -t 3 line <&"$ctl"
    prlimit --pid "$pid" --nofile=40:40 || return 1
    used=$(ls "/proc/$pid/fd" | wc -l)
    room=$((40 - used))
    for ((i = 0; i < room + 10; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$port" 2>/dev/null || break
        fds+=("$fd")
    done
    sleep 0.5
    c0=$(ticks "$pid"); l0=$(wc -l <"$tmp/server.err")
    sleep 3
    c1=$(ticks "$pid"); l1=$(wc -l <"$tmp/server.err")
    echo "# open-file limit 40, $used in use, $((room + 10)) clients connected"
    printf '%-40s %s\n' "CPU over 3 s (ticks of 1/$(getconf CLK_TCK) s)" $((c1 - c0))
    printf '%-40s %s\n' "log lines over 3 s" $((l1 - l0))
    printf '%-40s %s\n' "of which say accept failed" \
        "$(sed -n "$((l0 + 1)),${l1}p" "$tmp/server.err" | grep -c 'accept failed')"
    printf '%-40s %s\n' "log lines in all so far" "$l1"
    for fd in "${fds[@]}"; do exec {fd}>&-; done
    t0=${EPOCHREALTIME/[.,]/}
    exec {fd}<>"/dev/tcp/127.0.0.1/$port"
    echo COUNT >&"$fd"
    if read -r -t 5 line <&"$fd"; then
        printf '%-40s %s ms\n' "clients gone: a new one served in" \
            $(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 ))
    else
        printf '%-40s %s\n' "clients gone: a new one served in" "no answer in 5 s"
    fi
    exec {fd}>&- {ctl}>&-
    sleep 0.3
    echo "# the log's accept lines:"
    grep -m 5 'accept' "$tmp/server.err" | sed 's/^/#   /'
}

# converse PORT REQ OUT DELAY: sends REQ in one go and saves every reply
# byte in OUT; the reader starts DELAY seconds late, so the replies fill
# the socket buffers first. Returns once the server closed (10 s at most).
converse() {
    timeout 10 bash -c '
        exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 97
        { sleep "$4"; cat <&3 >"$3"; } &
        cat "$2" >&3 2>/dev/null
        wait $!' _ "$@" 2>/dev/null
}

# QUIT with more pipelined after it: RUNS conversations of PRINT (3000
# people), QUIT and ~300 KB of ADDs; how many got the whole PRINT and Bye.
quit_run() {
    local runs=$1 port=$SRV_PORT n=3000 i d whole out=$tmp/quit.out
    awk -v n=$n 'BEGIN { for (i = 0; i < n; i++)
        printf "ADD f%d L%d 30 123-45-6789\n", i, i; print "QUIT" }' >"$tmp/pre"
    converse "$port" "$tmp/pre" "$out" 0
    { printf 'PRINT\nQUIT\n'
      awk 'BEGIN { for (i = 0; i < 10000; i++)
          printf "ADD late%d After%d 1 000-00-0000\n", i, i }'; } >"$tmp/req"
    echo "# $runs runs each: PRINT of $n people, QUIT, then $(( $(wc -c <"$tmp/req") / 1024 )) KB more, in one write"
    for d in 0 0.2; do
        whole=0
        for ((i = 0; i < runs; i++)); do
            : >"$out"
            converse "$port" "$tmp/req" "$out" "$d"
            [[ $(wc -l <"$out") -eq $((n + 3)) && $(tail -n 1 "$out") == Bye &&
               $(sed -n "$((n + 2))p" "$out") == --* ]] && whole=$((whole + 1))
        done
        printf '%-40s %s of %s\n' "reader ${d} s late: whole PRINT and Bye" "$whole" "$runs"
    done
}

# Idle connections: X asks COUNT and then says nothing; Y connects and asks
# COUNT. How long Y waits (in coarse mode X holds the lock), and how long
# until the server closes X; each bounded by 5 s.
idle_run() {
    local port=$SRV_PORT x y t0 t1 line
    exec {x}<>"/dev/tcp/127.0.0.1/$port" || return 1
    echo COUNT >&"$x"; read -r -t 3 line <&"$x"
    t0=${EPOCHREALTIME/[.,]/}
    exec {y}<>"/dev/tcp/127.0.0.1/$port" || return 1
    echo COUNT >&"$y"
    if read -r -t 5 line <&"$y"; then
        printf '%-40s %s ms\n' "a second client's COUNT answered in" \
            $(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 ))
    else
        printf '%-40s %s\n' "a second client's COUNT answered in" "no answer in 5 s"
    fi
    # read fails on EOF (status 1) or after the time-out (status > 128)
    local st=0
    while ((st == 0)); do read -r -t 5 line <&"$x"; st=$?; done
    ((st > 128)) && t1="still open after 5 s" ||
        t1="$(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 )) ms"
    printf '%-40s %s\n' "the idle client closed by the server in" "$t1"
    exec {x}>&- {y}>&-
}

rc=0
if ((idle)); then
    idle_run || rc=1
elif ((descriptors)); then
    descriptor_run || rc=1
elif ((quit)); then
    quit_run "$quit" || rc=1
else
    "$BIN/bench-limits" --port "$SRV_PORT" --server-pid "$pid" "$@"
    rc=$?
fi
srv_stop "$pid" TERM 5
[[ $SRV_HOW == died ]] && SRV_HOW="had exited (bench-limits sent SIGTERM)"
[[ $SRV_HOW == stopped ]] && SRV_HOW="stopped here (SIGTERM)"
echo "# server $SRV_HOW, exit status $SRV_RC; last log lines:"
tail -n 3 "$tmp/server.err" | sed 's/^/#   /'
exit "$rc"
