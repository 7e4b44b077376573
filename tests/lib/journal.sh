# tests/lib/journal.sh -- what the journal's suites share (sourced after
# tests/lib/common.sh): ask, stat_field, restart, add_2000, the kill -9 cycles under pipelined
# load that check no acknowledged mutation is lost, and a small tmpfs for
# the disk-full cases. The caller
# sets J, the journal's path.

# ask PORT TEXT: the replies to TEXT (printf escapes) on one connection,
# which then QUITs (its Bye is not shown).
ask() {
    local out=$TEST_TMP/ask.out
    converse_str "$1" "$2QUIT\n" "$out" 10
    sed '$ { /^Bye$/d }' "$out"
}

# stat_field PORT NAME: one STATS figure.
stat_field() {
    ask "$1" 'STATS\n' | awk -v k="$2" '$1 == k { print $2 }'
}

# restart MODE ARGS...: stops the running server (TERM) and starts again.
restart() {
    stop_server "$SRV_PID"
    start_server "$@"
}

# add_2000: 2000 ADDs of fresh keys from 20 connections, one in flight
# each (ssn-bench), against the running server. Sets ANSWERED to "sent,
# answered" and ACKED to how many were acknowledged (what a restart must
# find).
add_2000() {
    local last
    last=$("$CLIENTS_BIN/ssn-bench" -p "$SRV_PORT" -c 20 -P 1 --mix 1:0:0 \
           -n 2000 --keys 100000 --csv 2>&1 | tail -n 1)
    ANSWERED=$(cut -d, -f8,9 <<<"$last")
    ACKED=$(cut -d, -f13 <<<"$last")
}

# A client's requests: ADD c<k>_<i> for i in 1..N, and after every third
# ADD a DELETE of the ADD before it. Every name is added once at most.
make_load() {   # CLIENT N FILE
    awk -v c="$1" -v n="$2" 'BEGIN {
        for (i = 1; i <= n; i++) {
            printf "ADD f%d c%d_%d %d %03d-%02d-%04d\n", i, c, i, i % 150,
                   c % 1000, i % 100, i % 10000
            if (i % 3 == 0)
                printf "DELETE f%d c%d_%d\n", i - 1, c, i - 1
        } }' >"$3"
}

# kill9_cycles CYCLES LABEL SIDE MODE ARGS...: CYCLES times, a server
# started with MODE ARGS (whose journal, "$J", is removed first) gets 4
# pipelining clients; SIDE, when not empty, is a function run in the
# background meanwhile (given the port); the server is killed with -9 at
# a point that differs from cycle to cycle and started again, and then
# every acknowledged ADD must be there, no acknowledged DELETE undone,
# nothing present that no client sent, and CHECK must hold.
kill9_cycles() {
    local cycles=$1 label=$2 side=$3 cycle clients=4 n=30000 c pids bad
    local side_pid
    shift 3
    rm -f "$J" "$TEST_TMP"/load* "$TEST_TMP/sent" "$TEST_TMP/kill9.bad"
    for ((cycle = 1; cycle <= cycles; cycle++)); do
        start_server "$@" || return
        side_pid=""
        if [[ -n $side ]]; then
            "$side" "$SRV_PORT" &
            side_pid=$!
        fi
        pids=()
        for ((c = 1; c <= clients; c++)); do
            make_load "$cycle$c" "$n" "$TEST_TMP/load$c"
            : >"$TEST_TMP/acks$c"
        done
        for ((c = 1; c <= clients; c++)); do
            timeout 20 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
                cat <&3 >"$3" & cat "$2" >&3; wait $!' _ "$SRV_PORT" \
                "$TEST_TMP/load$c" "$TEST_TMP/acks$c" 2>/dev/null &
            pids+=($!)
        done
        # Kill once the first client has some acknowledgements, at a
        # point that differs from cycle to cycle: 5,000 to 16,667 replies
        # of its 40,000, so that a fast machine, whose load runs on while
        # this loop sleeps, still kills mid-load.
        local want=$(( (15 + RANDOM % 36) * 1000 )) t
        for ((t = 0; t < 500; t++)); do
            (( $(stat -c %s "$TEST_TMP/acks1" 2>/dev/null || echo 0) >= want )) && break
            sleep 0.01
        done
        stop_server "$SRV_PID" KILL
        [[ -n $side_pid ]] && kill "$side_pid" 2>/dev/null
        wait "${pids[@]}" $side_pid 2>/dev/null
        start_server "$@" || return
        converse_str "$SRV_PORT" 'PRINT\nCOUNT\nQUIT\n' "$TEST_TMP/print" 30
        awk -F'[ ,]+' '/ -- / {print $2 " " $1}' "$TEST_TMP/print" \
            >"$TEST_TMP/present"
        # The listing must be whole for the checks below to mean anything.
        expect_eq "$label, cycle $cycle: PRINT after the restart is whole" \
            "$(tail -n 2 "$TEST_TMP/print" | head -n 1)" \
            "$(wc -l <"$TEST_TMP/present")"
        local acked=0
        bad=0
        for ((c = 1; c <= clients; c++)); do
            # Pair the i-th request with the i-th whole reply line. An
            # acknowledged ADD must be there, an acknowledged DELETE must
            # not, unless a later request on the same name was sent but
            # not acknowledged (it may or may not have been applied).
            head -n "$(wc -l <"$TEST_TMP/acks$c")" "$TEST_TMP/acks$c" \
                >"$TEST_TMP/whole$c"
            acked=$((acked + $(grep -c '^OK$' "$TEST_TMP/whole$c")))
            awk 'FILENAME == ARGV[1] { ack[FNR] = $0; next }
                 FILENAME == ARGV[2] { k = $2 " " $3
                     if (FNR in ack) { if (ack[FNR] == "OK") fate[k] = $1 }
                     else maybe[k] = 1
                     next }
                 { have[$1 " " $2] = 1 }
                 END { for (k in fate) {
                         if (k in maybe) continue
                         if (fate[k] == "ADD" && !(k in have)) { print "lost ADD " k; bad++ }
                         if (fate[k] == "DELETE" && (k in have)) { print "DELETE undone " k; bad++ } }
                       exit bad > 0 }' "$TEST_TMP/whole$c" "$TEST_TMP/load$c" \
                "$TEST_TMP/present" >>"$TEST_TMP/kill9.bad" || bad=1
        done
        # Nothing that was never sent: every present name is in a load file
        # of this or an earlier cycle.
        cat "$TEST_TMP"/load* | awk '$1 == "ADD" { print $2 " " $3 }' \
            >>"$TEST_TMP/sent"
        awk 'NR == FNR { sent[$0] = 1; next } !($0 in sent) { print "unsent " $0; b = 1 }
             END { exit b }' "$TEST_TMP/sent" "$TEST_TMP/present" \
            >>"$TEST_TMP/kill9.bad" || bad=1
        expect_eq "$label, cycle $cycle ($acked acknowledged): nothing acknowledged lost, nothing unsent" \
            "$bad" 0
        check "$label, cycle $cycle: the kill came before the load ended" \
            test "$acked" -lt $((clients * n * 4 / 3))
        ((bad == 0)) || head -n 5 "$TEST_TMP/kill9.bad" | sed 's/^/#   /'
        expect_match "$label, cycle $cycle: CHECK holds" \
            "$(ask "$SRV_PORT" 'CHECK\n')" '^OK [0-9]+ entries, all invariants hold'
        stop_server "$SRV_PID"
    done
}

# ---- a full disk ------------------------------------------------------------

# mount_full WHAT: a 1 MB tmpfs mounted on a new directory outside
# TEST_TMP, in FULL_MNT, unmounted however the script ends (the EXIT trap
# runs unmount_full too). Returns 1, with a SKIP line naming WHAT, when it
# cannot be mounted (not root).
FULL_MNT=""
unmount_full() {
    [[ -n $FULL_MNT ]] || return 0
    umount "$FULL_MNT" 2>/dev/null
    rmdir "$FULL_MNT" 2>/dev/null
    FULL_MNT=""
}
srv_on_exit unmount_full

mount_full() {
    local mnt
    if [[ $(id -u) != 0 ]] ||
       ! mnt=$(mktemp -d "${TMPDIR:-/tmp}/ssnfull.XXXXXX") ||
       ! mount -t tmpfs -o size=1m tmpfs "$mnt" 2>/dev/null; then
        [[ -n ${mnt:-} ]] && rmdir "$mnt"
        echo "ok - # SKIP $1: needs root to mount a tmpfs"
        return 1
    fi
    FULL_MNT=$mnt
}

# reply: the next reply line on CONN into R; "(closed)" after what was
# read when the server closed the connection, "(timeout)" after 5 s.
reply() {
    local rc
    IFS= read -r -t 5 -u "$CONN" R; rc=$?
    if ((rc > 128)); then
        R="(timeout)"
    elif ((rc)); then
        R+="(closed)"
    fi
}

# say REQUEST...: each request on CONN in turn, each answered before the
# next leaves (so each mutation is a round of its own); the one-line
# replies into T, a line each. CONN is an open_conn's (common.sh).
say() {
    local r
    T=""
    for r in "$@"; do
        send_line "$CONN" "$r" 2>/dev/null
        reply
        T+=${T:+$'\n'}$R
    done
}

# upto LAST REQUEST: the reply lines to REQUEST, up to the line LAST, into T.
upto() {
    T=""
    send_line "$CONN" "$2"
    while reply; [[ $R != "$1" && $R != *'('*')' ]]; do
        T+=$R$'\n'
    done
    T+=$R
}

# A STATS figure, asked on CONN, into R.
stats_field() {
    upto END STATS
    R=$(awk -v k="$1" '$1 == k { print $2 }' <<<"$T")
}
