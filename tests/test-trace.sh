#!/bin/bash
# test-trace.sh -- --trace FILE over real TCP. A short traced run (both
# drivers, a journal with --fsync always, coarse's connection-long holds
# with the event driver) leaves a file that is a JSON array (parsed by
# python3 or jq when either is installed; the layout checked line by line
# otherwise), whose complete events ("ph":"X") nest properly on each
# thread, whose async events ("b", "e") pair up by id, which has the
# lock's wait and hold, reply writes and journal rounds on named lanes,
# and no name or SSN. A load larger than one thread's ring drops events,
# counts them in STATS and says so in the log, and the file still parses
# and holds the run's last replies (a ring keeps its latest events).
# A file that cannot be written stops the start-up, naming it.
# TRACE START and STOP (--trace-file) over TCP, on both drivers and coarse:
# the state before, during and after a window; STOP's file parses, nests,
# is 0600, holds the events STOP counted and no earlier ones (STATS'
# total since start-up is theirs); a second window rewrites it; START
# while on and STOP while off are refused, and both without a trace file,
# naming --trace-file; AUTH first with a password; never through a
# symbolic link; --trace with --trace-file is refused. A window's file,
# and the rings' memory, are bounded however many threads record.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/journal.sh"

# SANITIZED=1 (with BIN=bin/tsan or bin/asan): RSS is not checked.
SANITIZED=${SANITIZED:-0}
SB=$BIN/ssn-bench
[[ -x $SB ]] || SB=bin/ssn-bench       # BIN=bin/tsan has servers only
T=$TEST_TMP/trace.json
J=$TEST_TMP/people.journal

# parses FILE: 0 when it is a JSON array of objects (or no parser here).
parses() {
    if command -v python3 >/dev/null; then
        python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not (isinstance(d, list) and d and all(isinstance(e, dict) for e in d)))' "$1"
    elif command -v jq >/dev/null; then
        jq -e 'type == "array" and length > 0' "$1" >/dev/null
    else
        head -n 1 "$1" | grep -qx '\[' && tail -n 1 "$1" | grep -qx '\]'
    fi
}

# well_formed FILE: every line between "[" and "]" one event object with
# pid and tid; each thread's "X" spans nest (a span starting inside
# another ends inside it: no partial overlap), every "b" has one "e" with
# its id, after it. Says what is wrong.
well_formed() {
    local bad
    bad=$(awk '
        function num(key,   s) {
            if (!match($0, "\"" key "\":\"?[0-9.]+")) return ""
            s = substr($0, RSTART, RLENGTH); sub(/^"[a-z]+":"?/, "", s)
            return s
        }
        NR == 1 { if ($0 != "[") { print "line 1 is not ["; exit 1 }; next }
        /^\]$/ { closed = 1; next }
        {
            if (closed) { print "after ]: " $0; exit 1 }
            if ($0 !~ /^\{"name":"[^"]+",.*"pid":[0-9]+,"tid":[0-9]+.*\},?$/) {
                print "not an event line: " $0; exit 1
            }
            ph = $0; sub(/.*"ph":"/, "", ph); ph = substr(ph, 1, 1)
            if (ph == "X") {
                printf "%d %.3f %.3f\n", num("tid"), num("ts"), num("dur") > SPANS
                n++
            } else if (ph == "b") {
                if (num("id") in open) { print "id opened twice"; exit 1 }
                open[num("id")] = num("ts")
            } else if (ph == "e") {
                id = num("id")
                if (!(id in open)) { print "e without b: " $0; exit 1 }
                if (num("ts") + 0 < open[id] + 0) { print "e before b"; exit 1 }
                delete open[id]
            } else if (ph != "M") { print "unknown ph " ph; exit 1 }
        }
        END {
            if (!closed) { print "no closing ]"; exit 1 }
            for (id in open) { print "b without e: " id; exit 1 }
            if (!n) { print "no spans"; exit 1 }
        }' SPANS="$TEST_TMP/spans" "$1") || { echo "#   $bad"; return 1; }
    # Per thread, by start (the longer first when two start together).
    bad=$(sort -k1,1n -k2,2n -k3,3nr "$TEST_TMP/spans" | awk '
        $1 != tid { tid = $1; top = 0 }
        {
            s = $2; e = $2 + $3
            while (top && end[top] <= s + 0.0005) top--
            if (top && e > end[top] + 0.0005) {
                printf "tid %d: [%s, %.3f] overlaps the end of one ending at %.3f\n", tid, s, e, end[top]
                exit 1
            }
            end[++top] = e
        }') || { echo "#   $bad"; return 1; }
}

# has FILE NAME: at least one event called NAME.
has() {
    grep -q "^{\"name\":\"$2\"" "$1"
}

traced_run() {      # LABEL SERVER-ARGS...
    local label=$1 s
    shift
    rm -f "$T" "$J"
    start_server "$@" --trace "$T" || return 1
    ask "$SRV_PORT" 'ADD Zed Quux 44 987-65-4321\nFIND Zed Quux\nPRINT\n' >/dev/null
    # coarse serves one connection at a time: a second would wait, unread,
    # for ssn-bench's time-out.
    "$SB" -p "$SRV_PORT" -c "$([[ $1 == coarse ]] && echo 1 || echo 4)" \
        -P 4 -n 3000 --keys 500 >/dev/null 2>&1
    # A wait for the lock needs two sessions to meet at it, which a loaded
    # machine may not make happen in one run: again until one did.
    local i
    for ((i = 0; i < 20 && ${WANT_WAIT:-0}; i++)); do
        ask "$SRV_PORT" 'STATS\n' | grep -Eq '^lock_contended [1-9]' && break
        "$SB" -p "$SRV_PORT" -c 4 -P 4 -n 3000 --keys 500 >/dev/null 2>&1
    done
    s=$(ask "$SRV_PORT" 'STATS\n')
    expect_match "$label: STATS says trace 1, events, none dropped" \
        "$(awk '/^trace/ { printf "%s %s;", $1, $2 }' <<<"$s")" \
        '^trace 1;trace_events [1-9][0-9]*;trace_events_dropped 0;$'
    stop_server "$SRV_PID"
    expect_eq "$label: stops with status 0" "$STOP_RC" 0
    check "$label: the trace is a JSON array" parses "$T"
    check "$label: spans nest on each thread, async events pair up" \
        well_formed "$T"
    check "$label: no name and no SSN in it" \
        bash -c "! grep -Eq 'Zed|Quux|[0-9]{3}-[0-9]{2}-[0-9]{4}' '$T'"
    expect_match "$label: the log says how many were written" \
        "$(cat "$SRV_ERR")" "trace: [1-9][0-9]* events written to .*, 0 dropped"
}

if WANT_WAIT=1 traced_run "--io threads, fine, journal" fine --journal "$J" --fsync always; then
    for k in "wait for the store lock" "hold the store lock" "write replies" \
             "journal round"; do
        check "--io threads: '$k' spans" has "$T" "$k"
    done
    check "--io threads: a lane per client thread" \
        grep -q '"thread_name".*"args":{"name":"client 4"}' "$T"
fi
if traced_run "--io events, buffered" buffered --io events --workers 2; then
    check "--io events: the workers' lanes" \
        grep -q '"thread_name".*"args":{"name":"worker [12]"}' "$T"
    check "--io events: holds on the workers' lanes" has "$T" "hold the store lock"
fi
if traced_run "--io events, coarse" coarse --io events --workers 1; then
    check "--io events coarse: a connection's session-long hold is async" \
        grep -q '"a connection holds the store lock".*"ph":"b"' "$T"
fi

# ---- a window of a running server: TRACE START and STOP --------------------

# events_of FILE: the events the file holds, as STOP counts them (a "b"
# and its "e" are one).
events_of() {
    grep -c '"ph":"[Xb]"' "$1"
}

# window_run LABEL CLIENTS SERVER-ARGS...: CLIENTS for ssn-bench (coarse
# serves one connection at a time: 1 there).
window_run() {
    local label=$1 c=$2 r n n2 total
    shift 2
    rm -f "$T"
    start_server "$@" --trace-file "$T" || return 1
    r=$(ask "$SRV_PORT" 'TRACE\nTRACE STOP\n')
    expect_eq "$label: off before TRACE START; STOP refused" "$r" \
        $'trace off: 0 events, 0 dropped\nError: trace is off (TRACE START starts it)'
    "$SB" -p "$SRV_PORT" -c "$c" -P 4 -n 1000 --keys 100 >/dev/null 2>&1
    check "$label: no file before the window" test ! -e "$T"
    r=$(ask "$SRV_PORT" 'TRACE START\nTRACE START\n')
    expect_eq "$label: TRACE START, then refused while on" "$r" \
        $'OK\nError: trace is already on (TRACE STOP writes it)'
    "$SB" -p "$SRV_PORT" -c "$c" -P 4 -n 2000 --keys 500 >/dev/null 2>&1
    r=$(ask "$SRV_PORT" 'TRACE\n')
    expect_match "$label: TRACE while on counts events" "$r" \
        '^trace on: [1-9][0-9]* events, 0 dropped$'
    expect_eq "$label: STATS says trace 1" "$(stat_field "$SRV_PORT" trace)" 1
    r=$(ask "$SRV_PORT" 'TRACE STOP\n')
    expect_match "$label: TRACE STOP answers once written" "$r" \
        '^OK [1-9][0-9]* events? written, 0 dropped$'
    n=${r#OK }
    n=${n%% *}
    check "$label: the file is a JSON array" parses "$T"
    check "$label: spans nest, async events pair up" well_formed "$T"
    expect_eq "$label: it holds the events STOP counted" "$(events_of "$T")" "$n"
    expect_eq "$label: 0600" "$(stat -c %a "$T")" 600
    expect_eq "$label: none before the window (STATS' total is its)" \
        "$(stat_field "$SRV_PORT" trace_events)" "$n"
    r=$(ask "$SRV_PORT" 'TRACE\nTRACE STOP\n')
    expect_eq "$label: off again with the window's figures; STOP refused" \
        "$r" "trace off: $n events, 0 dropped"$'\nError: trace is off (TRACE START starts it)'
    # Three connections: coarse's session-long hold must end in it.
    r=$(ask "$SRV_PORT" 'TRACE START\n'; ask "$SRV_PORT" 'COUNT\n'
        ask "$SRV_PORT" 'TRACE STOP\n')
    expect_match "$label: a second, short window" "$r" \
        $'^OK\n[0-9]+\nOK [1-9][0-9]* events? written, 0 dropped$'
    n2=${r##*OK }
    n2=${n2%% *}
    check "$label: it rewrote the file, which parses" parses "$T"
    expect_eq "$label: ... with that window's events only" \
        "$(events_of "$T")" "$n2"
    total=$(stat_field "$SRV_PORT" trace_events)
    expect_eq "$label: STATS trace_events counts both windows" "$total" \
        "$((n + n2))"
    stop_server "$SRV_PID"
    expect_eq "$label: stops with status 0" "$STOP_RC" 0
    expect_eq "$label: nothing written at exit, the file is the window's" \
        "$(events_of "$T")" "$n2"
}

window_run "window, --io threads, fine" 4 fine
window_run "window, --io events, buffered" 4 buffered --io events --workers 2
window_run "window, --io events, coarse" 1 coarse --io events --workers 1

if start_server buffered; then
    r=$(ask "$SRV_PORT" 'TRACE\nTRACE START\nTRACE STOP\n')
    expect_eq "no trace file: TRACE says so, START and STOP name the option" \
        "$r" "trace off: no trace file (start the server with --trace-file FILE)
Error: no trace file (start the server with --trace-file FILE)
Error: no trace file (start the server with --trace-file FILE)"
    stop_server "$SRV_PID"
fi

printf 'Open-Sesame42\n' >"$TEST_TMP/pw"
chmod 600 "$TEST_TMP/pw"
rm -f "$T"
if start_server buffered --io events --password-file "$TEST_TMP/pw" \
        --trace-file "$T"; then
    r=$(ask "$SRV_PORT" 'TRACE START\nTRACE\nTRACE STOP\n')
    expect_eq "with a password: TRACE refused before AUTH" "$r" \
        $'Error: authentication required\nError: authentication required\nError: authentication required'
    check "... no file started" test ! -e "$T"
    r=$(ask "$SRV_PORT" 'AUTH Open-Sesame42\nTRACE START\nTRACE STOP\n')
    expect_match "... and served after it" "$r" \
        $'^OK\nOK\nOK [0-9]+ events? written, 0 dropped$'
    stop_server "$SRV_PID"
fi

echo keep >"$TEST_TMP/victim"
ln -sf "$TEST_TMP/victim" "$TEST_TMP/link.json"
if start_server buffered --trace-file "$TEST_TMP/link.json"; then
    r=$(ask "$SRV_PORT" 'TRACE START\nTRACE\n')
    expect_match "a symbolic link as the file: START refused" "$r" \
        $'^Error: cannot write the trace file: Too many levels of symbolic links\ntrace off: 0 events, 0 dropped$'
    expect_eq "... the file it points to untouched" "$(cat "$TEST_TMP/victim")" keep
    stop_server "$SRV_PID"
fi

err=$("$BIN/ssnserver-buffered" -p 0 --trace "$T" --trace-file "$T" \
      2>&1 </dev/null)
expect_match "--trace with --trace-file: refused" "$?:$err" \
    "^2:ssnserver-buffered: --trace and --trace-file: give one"

# ---- a ring that fills -----------------------------------------------------

# A worker's ring overwrites its oldest events: once a load larger than it
# has run, a PRINT of its 500 people is still in the file, at the end.
rm -f "$T"
if start_server buffered --io events --workers 1 --batch 1 --trace "$T"; then
    "$SB" -p "$SRV_PORT" -c 4 -P 16 -n 30000 --keys 500 >/dev/null 2>&1
    d=$(stat_field "$SRV_PORT" trace_events_dropped)
    expect_match "more events than a ring holds: STATS counts the dropped" \
        "$d" '^[1-9][0-9]*$'
    expect_match "... and TRACE" "$(ask "$SRV_PORT" 'TRACE\n')" \
        '^trace on: [1-9][0-9]* events, [1-9][0-9]* dropped$'
    converse_str "$SRV_PORT" 'PRINT\nQUIT\n' "$TEST_TMP/print"
    pb=$(( $(wc -c <"$TEST_TMP/print") - 4 ))   # without "Bye\n"
    stop_server "$SRV_PID"
    expect_match "... and the log says so at the end" "$(cat "$SRV_ERR")" \
        "trace: [0-9]+ events? written to .*, [1-9][0-9]* dropped"
    check "... and the file still parses, spans nested" \
        bash -c "$(declare -f parses); parses '$T'"
    check "... well formed" well_formed "$T"
    check "... and ends with the last replies: the PRINT's ($pb bytes)" \
        grep -q "\"write replies\".*\"bytes\":$pb}" "$T"
fi

# A window's file is bounded however many threads record: 64 connections,
# each a thread, record about 800,000 events; the file holds at most
# TRACE_WINDOW_EVENTS (262,144; about 30 MB) and counts the rest as
# dropped. Without the bound it held all the rings' events (114 MB for 1.5
# million FINDs), and threads that come and go during a window would each
# have added theirs. And the rings' memory is bounded: at most
# TRACE_RINGS_MAX (32) of 384 KiB exist at once, fewer than the threads
# here. Without that bound each of the 64 had one (peak RSS 19.6 MB above
# the same load untraced; within 12 MiB and 2 MiB to spare with it).
# Sanitizers' shadow memory is most of their RSS: not checked then.
RINGS_MAX=32 RING_KB=384
rm -f "$T"
if start_server fine --trace-file "$T"; then
    "$SB" -p "$SRV_PORT" -c 64 -t 2 -n 100000 --mix 0:1:0 >/dev/null 2>&1
    base=$(awk '/^VmHWM:/ { print $2 }' "/proc/$SRV_PID/status")
    r=$(ask "$SRV_PORT" 'TRACE START
')
    "$SB" -p "$SRV_PORT" -c 64 -t 2 -n 400000 --mix 0:1:0 >/dev/null 2>&1
    peak=$(awk '/^VmHWM:/ { print $2 }' "/proc/$SRV_PID/status")
    (( SANITIZED )) ||
    check "64 threads' rings: peak RSS $((peak - base)) kB above the load untraced, within $RINGS_MAX rings ($((RINGS_MAX * RING_KB)) kB) and 2 MiB" \
        test "$((peak - base))" -le $((RINGS_MAX * RING_KB + 2048))
    r=$(ask "$SRV_PORT" 'TRACE STOP
')
    n=${r#OK }
    n=${n%% *}
    expect_match "64 threads' rings: STOP drops what passes the window's bound" \
        "$r" '^OK [1-9][0-9]* events? written, [1-9][0-9]* dropped$'
    check "... at most 262144 written ($n)" test "${n:-0}" -le 262144 -a "${n:-0}" -gt 100000
    expect_eq "... which the file holds" "$(events_of "$T")" "$n"
    check "... in at most 40 MB ($(( $(stat -c %s "$T") >> 20 )) MB)" \
        test "$(stat -c %s "$T")" -le $((40 << 20))
    check "... and it parses" parses "$T"
    stop_server "$SRV_PID"
fi

# ---- a file that cannot be written ------------------------------------------

err=$("$BIN/ssnserver-buffered" -p 0 --trace "$TEST_TMP/no/such/dir/t.json" \
      2>&1 </dev/null)
expect_match "--trace into a missing folder: refused at start-up, named" \
    "$?:$err" "^1:ssnserver: --trace: cannot write .*no/such/dir/t\\.json: "
finish
