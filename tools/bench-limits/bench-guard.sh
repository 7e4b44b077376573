#!/bin/bash
# bench-guard.sh -- the attacks of tests/test-server-guard.sh at full size,
# in both I/O models, one table at the end (docs/LIMITS.md, "Figures"):
#
#   conn      what one idle connection costs: RSS of a buffered server
#             before and after N connections that each asked one COUNT
#             (the "clients x per-connection cost" term of the bound);
#   memory    a store of P people (a listing of about 5 MB at 10^5); C
#             clients each pipeline K times "ADD someone new, PRINT" and
#             never read. Peak RSS (VmHWM) above the base (the store and
#             its cached listing) against the bound base + budget +
#             4 listings + C x the per-connection cost, at
#             --max-output-total 64m and at its default, with the clients
#             dropped (clients_reply_budget, clients_output_limited); and
#             the control, --max-output-total 0, stopped early when RSS
#             passes --rss-cap (3 GiB);
#   guess     wrong AUTHs: one connection pipelining them until the close;
#             G connections of one address doing the same over and over;
#             I "impatient" connections that send one guess each and take
#             silence for a no (a right password is answered at once, a
#             wrong one after 250 ms), then reconnect. Guesses a second
#             (STATS auth_failures) and the server's log bytes per 10^6;
#   unauth    U idle connections that never authenticate (1,024, and 5,000
#             with -m 6000) against coarse and buffered servers: how long
#             a client with the password waits for OK and for a COUNT.
#
#   tools/bench-limits/bench-guard.sh [--smoke] [--io 'threads events']
#       [--part conn,memory,guess,unauth] [--seconds S] [--rss-cap MIB]
#
# --smoke runs every part at toy sizes in about 40 s (test-bench-smoke.sh).
# Every server runs on 127.0.0.1 port 0 and is stopped by its PID
# (tests/lib/server.sh); the clients are this script's own descriptors and
# background loops, each bounded by a deadline. Exit status 0 when every
# run could be made (a bound passed is a figure, not a failure), 1 when a
# server would not start or a preload failed. KEEP=1 keeps the logs.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
BIN=${BIN:-bin}
source tests/lib/server.sh

smoke=0
ios="threads events"
parts="conn,memory,guess,unauth"
secs=""
rss_cap=3072
while (($#)); do
    case $1 in
    --smoke) smoke=1; shift ;;
    --io) ios=$2; shift 2 ;;
    --part) parts=$2; shift 2 ;;
    --seconds) secs=$2; shift 2 ;;
    --rss-cap) rss_cap=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-guard.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done

# Sizes: full, or --smoke.
if ((smoke)); then
    CONNS=100 PEOPLE=2000 CLIENTS=10 PAIRS=4 MEM_S=${secs:-2}
    BUDGETS="1m 0" GUESS_S=${secs:-2} PATIENT=8 IMPATIENT=4 UNAUTH="64"
else
    CONNS=1000 PEOPLE=100000 CLIENTS=100 PAIRS=20 MEM_S=${secs:-12}
    BUDGETS="64m default 0" GUESS_S=${secs:-10} PATIENT=256 IMPATIENT=32
    UNAUTH="1024 5000"
fi
WAIT_MS=20              # the impatient guesser's wait for an answer
WAIT_S=0.0$WAIT_MS
SSN=123-45-6789
PW=bench-Guard.7

ulimit -n "$(ulimit -Hn)" 2>/dev/null
tmp=$(mktemp -d /tmp/bench-guard.XXXXXX) || exit 1
cleanup() { [[ ${KEEP:-0} == 1 ]] && echo "# kept $tmp" || rm -rf "$tmp"; }
srv_on_exit cleanup
(umask 077; printf '%s\n' "$PW" >"$tmp/password")

ROWS=()
rc=0
nsrv=0

# row PART IO CASE MEASURED BOUND: one line of the final table.
row() {
    ROWS+=("$(printf '| %s | %s | %s | %s | %s |' "$@")")
    printf '# %s\n' "${ROWS[-1]}" >&2
}

# ms_since T: milliseconds since T (microseconds, from $EPOCHREALTIME)
# into MS, without a fork (a fork costs milliseconds on a busy machine).
ms_since() { MS=$(( (${EPOCHREALTIME/[.,]/} - $1) / 1000 )); }
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# start MODE [ARGS...]: a server in SRV_PID/SRV_PORT, its log in ERR.
start() {
    local mode=$1
    shift
    nsrv=$((nsrv + 1))
    ERR=$tmp/server$nsrv.err
    if ! srv_start "$tmp/server$nsrv.out" "$ERR" 10 "$BIN/ssnserver-$mode" \
            -p 0 "$@"; then
        echo "bench-guard.sh: ssnserver-$mode $* did not start: '$SRV_LINE'" >&2
        sed 's/^/  /' "$ERR" | head -n 5 >&2
        rc=1
        return 1
    fi
}

stop() {
    srv_stop "$SRV_PID" TERM 10
    [[ $SRV_RC == 0 ]] ||
        echo "# ssnserver ($ERR) exit status $SRV_RC ($SRV_HOW)" >&2
}

# stats_on FD: STATS over an open (authenticated) connection below 1024
# (read -t uses select), into the array ST.
stats_on() {
    local line
    declare -gA ST=()
    printf 'STATS\n' >&"$1"
    while read -r -t 5 line <&"$1" && [[ $line != END ]]; do
        ST[${line%% *}]=${line#* }
    done
}

# stats PORT [PASSWORD]: the same over a connection of its own.
stats() {
    local fd line
    declare -gA ST=()
    exec {fd}<>"/dev/tcp/127.0.0.1/$1" || return 1
    if [[ -n ${2:-} ]]; then
        printf 'AUTH %s\n' "$2" >&"$fd"
        read -r -t 5 line <&"$fd"
    fi
    stats_on "$fd"
    exec {fd}>&-
}

# converse PORT REQFILE OUTFILE: REQFILE sent in one go (it ends with
# QUIT), every reply byte into OUTFILE, until the server closes (120 s).
converse() {
    timeout 120 bash -c '
        exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
        cat "$2" >&3 &
        cat <&3 >"$3"
        wait' _ "$@"
}

# ---- conn: the cost of one idle connection ---------------------------------

part_conn() {
    local io=$1 fds=() fd i line base rss
    start buffered --io "$io" || return
    exec {fd}<>"/dev/tcp/127.0.0.1/$SRV_PORT"
    printf 'COUNT\n' >&"$fd"; read -r -t 5 line <&"$fd"
    exec {fd}>&-
    sleep 0.3
    base=$(status_kb "$SRV_PID" VmRSS)
    for ((i = 0; i < CONNS; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$SRV_PORT" || break
        fds+=("$fd")
        printf 'COUNT\n' >&"$fd"
    done
    for fd in "${fds[@]}"; do read -r -t 5 line <&"$fd"; done
    sleep 0.5
    rss=$(status_kb "$SRV_PID" VmRSS)
    CONN_KB[$io]=$(( (rss - base + ${#fds[@]} - 1) / ${#fds[@]} ))
    row conn "$io" "${#fds[@]} idle connections, one COUNT each: RSS $(mib "$base") -> $(mib "$rss") MiB" \
        "${CONN_KB[$io]} KiB a connection" "-"
    for fd in "${fds[@]}"; do exec {fd}>&-; done
    stop
}

# ---- memory: the reply budget ------------------------------------------------

# preload PORT N: people 0..N-1 in one pipelined conversation.
preload() {
    awk -v n="$2" -v ssn="$SSN" 'BEGIN { for (i = 0; i < n; i++)
        printf "ADD f%d L%d 30 %s\n", i, i, ssn; print "QUIT" }' >"$tmp/pre.req"
    converse "$1" "$tmp/pre.req" "$tmp/pre.out" &&
        [[ $(grep -c '^OK$' "$tmp/pre.out") -eq $2 ]]
}

part_memory() {
    local io=$1 budget=$2 args=() fds=() fd i k req L base bound peak cap
    local t0 ms stopped="" total per t1 line
    [[ $budget == default ]] || args=(--max-output-total "$budget")
    start buffered --io "$io" "${args[@]}" || return
    if ! preload "$SRV_PORT" "$PEOPLE"; then
        echo "bench-guard.sh: preload of $PEOPLE people failed" >&2
        rc=1; stop; return
    fi
    printf 'PRINT\nQUIT\n' >"$tmp/print.req"
    converse "$SRV_PORT" "$tmp/print.req" "$tmp/print.out"
    L=$(( $(wc -c <"$tmp/print.out") - 4 ))                 # "Bye\n"
    stats "$SRV_PORT"
    total=${ST[max_output_total]:-0}
    sleep 0.3
    base=$(status_kb "$SRV_PID" VmHWM)
    per=${CONN_KB[$io]:-192}
    if [[ $budget == 0 ]]; then
        bound=$(( base + 4 * L / 1024 + CLIENTS * per ))
        cap=$(( rss_cap * 1024 ))
    else
        bound=$(( base + total / 1024 + 4 * L / 1024 + CLIENTS * per ))
        cap=$(( bound + bound / 4 ))
    fi
    t0=${EPOCHREALTIME/[.,]/}
    for ((i = 0; i < CLIENTS; i++)); do
        { exec {fd}<>"/dev/tcp/127.0.0.1/$SRV_PORT"; } 2>/dev/null || break
        fds+=("$fd")
        req=""
        for ((k = 0; k < PAIRS; k++)); do
            req+="ADD n$i-$k Attack$i-$k 30 $SSN"$'\n'"PRINT"$'\n'
        done
        printf '%s' "$req" >&"$fd"
    done
    local deadline=$(( t0 + MEM_S * 1000000 )) key v u
    while (( ${EPOCHREALTIME/[.,]/} < deadline )); do
        while read -r key v u; do
            [[ $key == VmRSS: ]] || continue
            (( v > cap )) && ms_since "$t0" &&
                stopped=", stopped at ${rss_cap} MiB after $MS ms"
            break
        done <"/proc/$SRV_PID/status"
        [[ -n $stopped ]] && break
        sleep 0.02
    done
    peak=$(status_kb "$SRV_PID" VmHWM)
    # Another client meanwhile (the attackers still connected).
    t1=${EPOCHREALTIME/[.,]/}
    exec {fd}<>"/dev/tcp/127.0.0.1/$SRV_PORT"
    printf 'COUNT\n' >&"$fd"
    if read -r -t 10 line <&"$fd"; then
        ms_since "$t1"; ms="$MS ms"
    else
        ms="no answer in 10 s"
    fi
    exec {fd}>&-
    stats "$SRV_PORT"
    for fd in "${fds[@]}"; do exec {fd}>&-; done
    local name=$budget
    [[ $budget == default ]] && name="default ($(( total >> 20 )) MiB)"
    [[ $budget == 0 ]] && name="0 (none: the control)"
    row memory "$io" "--max-output-total $name: ${#fds[@]} clients x $PAIRS (ADD, PRINT), listing $(mib $((L / 1024))) MiB; dropped: budget ${ST[clients_reply_budget]:-?}, output limit ${ST[clients_output_limited]:-?}; a COUNT meanwhile: $ms" \
        "peak $(mib $((peak - base))) MiB above base $(mib "$base") MiB$stopped" \
        "$(mib $((bound - base))) MiB: $( ((peak <= bound)) && echo within || echo PASSED)"
    stop
}

# ---- guess: wrong passwords ----------------------------------------------------

# The guessers below fork nothing in their loops (on a loaded machine a
# fork costs tens of milliseconds, and the figure would be the shell's):
# each loops until $tmp/stop exists or the deadline (60 s) passes.

# patient PORT: connect, 3 wrong AUTHs, read to the close, again.
patient() {
    local fd line end=$(( ${EPOCHREALTIME/[.,]/} + 60000000 ))
    while [[ ! -e $tmp/stop ]] && (( ${EPOCHREALTIME/[.,]/} < end )); do
        { exec {fd}<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || continue
        printf 'AUTH a%s\nAUTH b%s\nAUTH c%s\n' $RANDOM $RANDOM $RANDOM >&"$fd"
        while read -r -t 5 line <&"$fd"; do :; done
        exec {fd}>&-
    done
}

# impatient PORT: connect, one wrong AUTH, WAIT_S for an answer, close,
# again: it would learn a guess from silence if the right password were
# answered at once and a wrong one late (auth_source.h says why not).
impatient() {
    local fd line end=$(( ${EPOCHREALTIME/[.,]/} + 60000000 ))
    while [[ ! -e $tmp/stop ]] && (( ${EPOCHREALTIME/[.,]/} < end )); do
        { exec {fd}<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || continue
        printf 'AUTH x%s\n' $RANDOM >&"$fd"
        read -r -t "$WAIT_S" line <&"$fd"
        exec {fd}>&-
    done
}

# probe PORT: the right password on a new connection; its answer's
# latency in MS (-1: none in 3 s).
probe() {
    local fd line t0=${EPOCHREALTIME/[.,]/}
    MS=-1
    { exec {fd}<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return
    printf 'AUTH %s\n' "$PW" >&"$fd"
    read -r -t 3 line <&"$fd" && [[ $line == OK ]] && ms_since "$t0"
    exec {fd}>&-
}

# guess_run IO KIND N: N loops of KIND; guesses a second (STATS
# auth_failures over GUESS_S seconds once they all run), the log bytes
# written meanwhile per 10^6 guesses, and, every 0.25 s, the right
# password's answer time: whether silence for WAIT_S is a sure no.
guess_run() {
    local io=$1 kind=$2 n=$3 i t0 ms f0 f1 b0 b1 s0 d0 pids=() fast=0 probes=0
    local slow=0 what bound
    start buffered --io "$io" --password-file "$tmp/password" || return
    rm -f "$tmp/stop"
    for ((i = 0; i < n; i++)); do
        "$kind" "$SRV_PORT" &
        pids+=($!)
    done
    # The counters are read before the guessers start and after they
    # stop: while they run, a STATS client of their address waits like
    # them (its AUTH is answered late) and may be dropped among them.
    f0=0 s0=0 d0=0
    b0=$(wc -c <"$ERR")
    t0=${EPOCHREALTIME/[.,]/}
    while (( ${EPOCHREALTIME/[.,]/} < t0 + GUESS_S * 1000000 )); do
        probe "$SRV_PORT"
        probes=$((probes + 1))
        (( MS >= 0 && MS <= WAIT_MS )) && fast=$((fast + 1))
        (( MS > slow || MS < 0 )) && slow=$MS
        sleep 0.25
    done
    ms_since "$t0"; ms=$MS
    touch "$tmp/stop"
    wait "${pids[@]}"
    sleep 2.5               # the last answers' delays, the log's period
    stats "$SRV_PORT" "$PW"
    f1=${ST[auth_failures]:-0}
    b1=$(wc -c <"$ERR")
    local g=$(( f1 - f0 ))
    if [[ $kind == patient ]]; then
        what="$n connections of one address, 3 wrong AUTHs each, again and again"
        bound=$(awk -v n="$n" 'BEGIN { printf "%.0f guesses/s (%d x 3 / 1.75 s)", n * 3 / 1.75, n }')
    else
        what="$n connections of one address, one wrong AUTH each, silence for $WAIT_MS ms read as a no"
        bound="nothing learned unless an answer comes within $WAIT_MS ms"
    fi
    row guess "$io" "$what: $g guesses in $ms ms; unauth dropped $(( ${ST[clients_unauth_dropped]:-0} - d0 )); the right password meanwhile answered within $WAIT_MS ms in $fast of $probes probes (slowest $slow ms)" \
        "$(awk -v g="$g" -v ms="$ms" 'BEGIN { printf "%.0f", g * 1000 / ms }') guesses/s; log $(( b1 - b0 )) bytes, $( ((g > 0)) && echo $(( (b1 - b0) * 1000000 / g )) || echo -) per 10^6 guesses ($(( ${ST[log_lines_suppressed]:-0} - s0 )) lines held back)" \
        "$bound"
    stop
}
part_guess() {
    local io=$1 fd t0 ms out answers
    start buffered --io "$io" --password-file "$tmp/password" || return
    exec {fd}<>"/dev/tcp/127.0.0.1/$SRV_PORT"
    t0=${EPOCHREALTIME/[.,]/}
    for ((i = 0; i < 1000; i++)); do printf 'AUTH guess%d\n' "$i"; done >&"$fd"
    timeout 10 cat <&"$fd" >"$tmp/guess.out"
    ms_since "$t0"; ms=$MS
    exec {fd}>&-
    answers=$(grep -c 'invalid password' "$tmp/guess.out")
    row guess "$io" "one connection, 1,000 wrong AUTHs pipelined: $answers answered, then the close ($(tail -n 1 "$tmp/guess.out" | cut -c1-60))" \
        "$(awk -v a="$answers" -v ms="$ms" 'BEGIN { printf "%.2f guesses/s (%d in %d ms)", a * 1000 / ms, a, ms }')" \
        "1.71 guesses/s (3 in 1.75 s)"
    stop
    guess_run "$io" patient "$PATIENT"
    guess_run "$io" impatient "$IMPATIENT"
}

# ---- unauth: idle connections that never authenticate ------------------------

part_unauth() {
    local io=$1 mode=$2 n=$3 args=() fds=() fd low i topen t0 t1 a c line
    (( n > 1024 )) && args=(-m $(( n + 1000 )))
    start "$mode" --io "$io" --password-file "$tmp/password" "${args[@]}" || return
    exec {low}</dev/null                # a descriptor below 1024 for read -t
    topen=${EPOCHREALTIME/[.,]/}
    for ((i = 0; i < n; i++)); do
        { exec {fd}<>"/dev/tcp/127.0.0.1/$SRV_PORT"; } 2>/dev/null || break
        fds+=("$fd")
    done
    t1=${EPOCHREALTIME/[.,]/}
    eval "exec $low<>/dev/tcp/127.0.0.1/$SRV_PORT"
    printf 'AUTH %s\n' "$PW" >&"$low"
    if read -r -t 30 line <&"$low"; then
        ms_since "$t1"; a="$line after $MS ms"
    else
        a="no answer in 30 s"
    fi
    t0=${EPOCHREALTIME/[.,]/}
    printf 'COUNT\n' >&"$low"
    if read -r -t 10 line <&"$low"; then
        ms_since "$t0"; c="$MS ms"
    else
        c="no answer in 10 s"
    fi
    stats_on "$low"
    eval "exec $low>&-"
    row unauth "$io" "$mode${args[*]:+ ${args[*]}}, ${#fds[@]} idle unauthenticated (opened in $(( (t1 - topen) / 1000 )) ms): unauth now ${ST[connections_unauth]:-?} (cap ${ST[max_unauth]:-?}), dropped ${ST[clients_unauth_dropped]:-?}" \
        "AUTH: $a; COUNT: $c" "-"
    for fd in "${fds[@]}"; do exec {fd}>&-; done
    stop
}

# ---- main --------------------------------------------------------------------

declare -A CONN_KB=()
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo "# bench-guard.sh$( ((smoke)) && echo ' --smoke'); $(date -u '+%Y-%m-%d %H:%M UTC'); $cpu, $(nproc) cores, MemTotal $(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) kB, Linux $(uname -r)"
for io in $ios; do
    [[ ,$parts, == *,conn,* ]] && part_conn "$io"
    if [[ ,$parts, == *,memory,* ]]; then
        for b in $BUDGETS; do part_memory "$io" "$b"; done
    fi
    [[ ,$parts, == *,guess,* ]] && part_guess "$io"
    if [[ ,$parts, == *,unauth,* ]]; then
        for n in $UNAUTH; do
            for m in coarse buffered; do part_unauth "$io" "$m" "$n"; done
        done
    fi
done
echo
echo "| part | io | case | measured | bound |"
echo "|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
exit "$rc"
