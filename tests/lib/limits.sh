# tests/lib/limits.sh -- helpers of the limit tests (test-server-limits.sh,
# test-server-guard.sh): people to preload and their PRINT, a server under a
# wrapper (prlimit), STATS fields, time marks, the log, a connection's end,
# CPU ticks and RSS. Sourced after tests/lib/common.sh, never run.

# people FROM TO: "ADD fI LI 30 SSN" for I in [FROM, TO).
people() {
    awk -v a="$1" -v b="$2" -v ssn="$SSN" 'BEGIN {
        for (i = a; i < b; i++) printf "ADD f%d L%d 30 %s\n", i, i, ssn }'
}

# print_of N: PRINT's whole reply for people 0..N-1 (bytewise order: the
# names hold no byte <= ' ', so sorting "last first" lines orders the tree).
print_of() {
    echo "$HEAD_LINE"
    awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "L%d f%d\n", i, i }' |
        sort |
        awk -v ssn="$SSN" '{ printf "%-30s -- %11s %4d\n", $1 ", " $2, ssn, 30 }'
    echo "$TAIL_LINE"
}

# preload PORT FROM TO [TIMEOUT]: adds people FROM..TO-1 over one
# connection; 0 when every ADD got OK and QUIT its Bye.
preload() {
    local req=$TEST_TMP/preload.req out=$TEST_TMP/preload.out
    { people "$2" "$3"; echo QUIT; } >"$req"
    converse "$1" "$req" "$out" "${4:-10}" || return 1
    [[ $(grep -c '^OK$' "$out") -eq $(($3 - $2)) &&
       $(tail -n 1 "$out") == Bye ]]
}

# start_under "WRAPPER..." MODE [ARGS...]: start_server, with the server run
# under a wrapper command that execs it (prlimit, setpriv), so SRV_PID is
# still the server.
start_under() {
    local -a wrap
    read -r -a wrap <<<"$1"
    local mode=$2 n=$SERVERS_STARTED
    shift 2
    SRV_OUT=$TEST_TMP/server$n.out
    SRV_ERR=$TEST_TMP/server$n.err
    SERVERS_STARTED=$((n + 1))
    srv_start "$SRV_OUT" "$SRV_ERR" 5 "${wrap[@]}" "$BIN/ssnserver-$mode" \
        -p 0 "$@" && return 0
    not_ok "$mode under '${wrap[*]}': server starts (first line: '$SRV_LINE')"
    sed 's/^/#   stderr: /' "$SRV_ERR" | head -n 5
    return 1
}

# stats_fd FD NAME: STATS on an open connection; the value of NAME in
# STAT (empty when missing or when the reply did not come).
stats_fd() {
    STAT=""
    send_line "$1" STATS
    while read_line "$1" 3 && [[ $LINE != END ]]; do
        [[ $LINE == "$2 "* ]] && STAT=${LINE#* }
    done
}

# stats_fd_until FD NAME WANT: stats_fd until NAME is WANT, for up to 2 s
# (a counter may be bumped just after the event another client sees).
stats_fd_until() {
    local i
    for ((i = 0; i < 20; i++)); do
        stats_fd "$1" "$2"
        [[ $STAT == "$3" ]] && return 0
        sleep 0.1
    done
    return 1
}

# stats_new PORT NAME: the same over a new connection.
stats_new() {
    local fd
    STAT=""
    open_conn "$1" 2>/dev/null || return 1
    fd=$CONN
    stats_fd "$fd" "$2"
    close_conn "$fd"
}

# mark VAR: the time in microseconds into VAR; ms_since T: milliseconds
# since T into MS. No subshell: a command substitution forks, which costs a
# few ms under load, too much for the latencies measured here.
mark() { printf -v "$1" '%s' "${EPOCHREALTIME/[.,]/}"; }
ms_since() { MS=$(( (${EPOCHREALTIME/[.,]/} - $1) / 1000 )); }

# log_wait FILE ERE SECONDS: the log writer flushes every 200 ms; polls.
log_wait() {
    local deadline
    mark deadline
    deadline=$(( deadline + $3 * 1000000 ))
    until grep -qE -- "$2" "$1" 2>/dev/null; do
        (( ${EPOCHREALTIME/[.,]/} < deadline )) || return 1
        sleep 0.05
    done
}

# wait_eof FD SECONDS: 0 when the server closes FD (any reply lines before
# the close are skipped) within SECONDS, 1 on time-out.
wait_eof() {
    local deadline left rc
    mark deadline
    deadline=$(( deadline + $2 * 1000000 ))
    while :; do
        left=$(( deadline - ${EPOCHREALTIME/[.,]/} ))
        (( left > 0 )) || return 1
        LINE=""
        IFS= read -r -t "$((left / 1000000)).$(printf '%06d' $((left % 1000000)))" \
            -u "$1" LINE
        rc=$?
        (( rc > 128 )) && return 1          # timed out
        (( rc == 0 )) || return 0           # EOF
    done
}

# cpu_ticks PID: utime + stime of the whole process, in clock ticks.
cpu_ticks() {
    local line f
    IFS= read -r line <"/proc/$1/stat" || return 1
    read -r -a f <<<"${line##*) }"
    echo $(( f[11] + f[12] ))            # fields 14 and 15 of stat
}

rss_kb() {
    awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

# rss_watch PID SECONDS: samples VmRSS every 20 ms (no fork but sleep's)
# for SECONDS; raises RSS_MAX (kB) to the largest value seen.
rss_watch() {
    local k v u deadline f=0
    [[ $2 == *.* ]] && f=${2#*.}
    f=${f}000000
    mark deadline
    deadline=$(( deadline + ${2%.*} * 1000000 + 10#${f:0:6} ))
    while (( ${EPOCHREALTIME/[.,]/} < deadline )); do
        while read -r k v u; do
            [[ $k == VmRSS: ]] || continue
            (( v > RSS_MAX )) && RSS_MAX=$v
            break
        done <"/proc/$1/status"
        sleep 0.02
    done
}
