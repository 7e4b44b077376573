#!/bin/bash
# test-trace.sh -- --trace FILE over real TCP. A short traced run (both
# drivers, a journal with --fsync always, coarse's connection-long holds
# with the event driver) leaves a file that is a JSON array (parsed by
# python3 or jq when either is installed; the layout checked line by line
# otherwise), whose complete events ("ph":"X") nest properly on each
# thread, whose async events ("b", "e") pair up by id, which has the
# lock's wait and hold, reply writes and journal rounds on named lanes,
# and no name or SSN. A load larger than one thread's ring drops events,
# counts them in STATS and says so in the log, and the file still parses.
# A file that cannot be written stops the start-up, naming it.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/journal.sh"

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
    "$SB" -p "$SRV_PORT" -c 4 -P 4 -n 3000 --keys 500 >/dev/null 2>&1
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

if traced_run "--io threads, fine, journal" fine --journal "$J" --fsync always; then
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

# ---- a ring that fills -----------------------------------------------------

rm -f "$T"
if start_server buffered --io events --workers 1 --batch 1 --trace "$T"; then
    "$SB" -p "$SRV_PORT" -c 4 -P 16 -n 30000 --keys 500 >/dev/null 2>&1
    d=$(stat_field "$SRV_PORT" trace_events_dropped)
    expect_match "more events than a ring holds: STATS counts the dropped" \
        "$d" '^[1-9][0-9]*$'
    stop_server "$SRV_PID"
    expect_match "... and the log says so at the end" "$(cat "$SRV_ERR")" \
        "trace: [0-9]+ events written to .*, [1-9][0-9]* dropped"
    check "... and the file still parses, spans nested" \
        bash -c "$(declare -f parses); parses '$T'"
    check "... well formed" well_formed "$T"
fi

# ---- a file that cannot be written ------------------------------------------

err=$("$BIN/ssnserver-buffered" -p 0 --trace "$TEST_TMP/no/such/dir/t.json" \
      2>&1 </dev/null)
expect_match "--trace into a missing folder: refused at start-up, named" \
    "$?:$err" "^1:ssnserver: --trace: cannot write .*no/such/dir/t\\.json: "
finish
