#!/bin/bash
# test-clients.sh -- the load clients against real servers: inputgen's
# stream (deterministic, 5:5:1, shards, --expect = the server's DIGEST),
# inclient (pipelining, latency figures, --rate), and kill_it's verdicts
# (verified on fine and buffered with 8 clients; FAILED when the server is
# killed or frozen mid-run; not verified on a non-empty server).
# Servers are started on port 0 and stopped by PID (tests/lib/common.sh).
# run-all: beside
source "$(dirname "$0")/lib/common.sh"

IG=$BIN/inputgen IC=$BIN/inclient KI=$BIN/kill_it

# ---- the tools' command lines ------------------------------------------
for tool in inputgen inclient kill_it; do
    out=$("$BIN/$tool" --version 2>&1)
    expect_match "$tool --version" "$out" "^$tool [0-9]"
    check "$tool --help prints a usage line" \
        bash -c "'$BIN/$tool' --help | grep -q '^usage: $tool'"
    "$BIN/$tool" --bogus >/dev/null 2>"$TEST_TMP/err"
    rc=$?
    expect_eq "$tool rejects a bad option with status 2" "$rc" 2
done
"$IG" 10 >/dev/null 2>"$TEST_TMP/err"; rc=$?
expect_eq "inputgen without SEED: status 2" "$rc" 2
"$IG" 10x 1 >/dev/null 2>"$TEST_TMP/err"; rc=$?
expect_match "inputgen names a bad NEVENTS" "$rc $(cat "$TEST_TMP/err")" '^2 .*NEVENTS'
"$IG" --shard 3/3 10 1 >/dev/null 2>"$TEST_TMP/err"; rc=$?
expect_eq "inputgen rejects --shard 3/3" "$rc" 2
"$IG" 10 1 /nonexistent >/dev/null 2>"$TEST_TMP/err"; rc=$?
expect_match "inputgen reports a missing list" "$rc $(cat "$TEST_TMP/err")" '^1 .*nonexistent'
"$KI" 127.0.0.1 1 10 0 >/dev/null 2>&1; rc=$?
expect_eq "kill_it rejects 0 clients" "$rc" 2
"$IC" 127.0.0.1 99999 10 1 >/dev/null 2>&1; rc=$?
expect_eq "inclient rejects port 99999" "$rc" 2

# ---- inputgen ------------------------------------------------------------
a=$("$IG" 3000 42 | sha256sum) b=$("$IG" 3000 42 | sha256sum)
c=$("$IG" 3000 43 | sha256sum)
check "inputgen: same arguments, same bytes" [ "$a" = "$b" ]
check "inputgen: another seed, another stream" [ "$a" != "$c" ]
# Recorded once; the same on every machine (own PRNG, bundled list).
expect_eq "inputgen 1000 42 matches its recorded digest" \
    "$("$IG" 1000 42 | sha256sum | cut -c1-16)" "cf87f8cf9c1d8599"

"$IG" 1150 7 >"$TEST_TMP/stream"
counts=$(awk '{ n[$1]++ } END { printf "%d %d %d %d", n["ADD"], n["DELETE"], n["PRINT"], n["DONE"] }' "$TEST_TMP/stream")
expect_eq "inputgen 1150: 50 + 500 ADD, 500 DELETE, 100 + 1 PRINT, 1 DONE" \
    "$counts" "550 500 101 1"
expect_eq "inputgen: the first 50 events are ADDs" \
    "$(head -n 50 "$TEST_TMP/stream" | grep -vc '^ADD ')" 0
expect_eq "inputgen: ends with PRINT, DONE" \
    "$(tail -n 2 "$TEST_TMP/stream" | tr '\n' ' ')" "PRINT DONE "

for k in 0 1 2; do
    "$IG" --shard $k/3 2000 $k | awk '$1 == "ADD" { print $3 }' | sort -u >"$TEST_TMP/shard$k"
done
check "inputgen --shard: three shards share no last name" \
    [ -z "$(cat "$TEST_TMP"/shard0 "$TEST_TMP"/shard1 "$TEST_TMP"/shard2 | sort | uniq -d)" ]

# ---- --expect against a real server ----------------------------------------
if start_server fine; then
    "$IG" --expect "$TEST_TMP/expect" 2000 5 >"$TEST_TMP/stream"
    "$IC" -q 127.0.0.1 "$SRV_PORT" - <"$TEST_TMP/stream" 2>"$TEST_TMP/err"
    expect_eq "inclient - sends the stream (status)" "$?" 0
    printf 'COUNT\nDIGEST\nDONE\n' | "$IC" 127.0.0.1 "$SRV_PORT" - >"$TEST_TMP/replies"
    want_digest=$(sha256sum <"$TEST_TMP/expect" | cut -d' ' -f1)
    expect_eq "inputgen --expect: COUNT matches" \
        "$(sed -n 1p "$TEST_TMP/replies")" "$(wc -l <"$TEST_TMP/expect")"
    expect_eq "inputgen --expect: sha256 of the file is the server's DIGEST" \
        "$(sed -n 2p "$TEST_TMP/replies")" "$want_digest"
    check "inputgen --expect is in tree order" \
        bash -c "LC_ALL=C sort -c -k1,1 -k2,2 '$TEST_TMP/expect'"
    stop_server "$SRV_PID"
fi

# ---- inclient ----------------------------------------------------------------
if start_server buffered; then
    "$IC" -q --json 127.0.0.1 "$SRV_PORT" 3000 9 2>"$TEST_TMP/json"
    expect_eq "inclient NEVENTS SEED: status 0" "$?" 0
    j=$(cat "$TEST_TMP/json")
    field() { echo "$j" | grep -o "\"$1\":[0-9.]*" | head -1 | cut -d: -f2; }
    expect_eq "inclient: every request answered" "$(field requests)" "$(field replies)"
    expect_eq "inclient: no Error: replies from an empty server" "$(field errors)" 0
    check "inclient: many requests in flight (pipelined): $(field inflight_max)" \
        [ "$(field inflight_max)" -gt 100 ]
    check "inclient: latencies 0 < min <= p50 <= p99 <= max" \
        awk -v a="$(field min)" -v b="$(field p50)" -v c="$(field p99)" -v d="$(field max)" \
            'BEGIN { exit !(a > 0 && a <= b && b <= c && c <= d) }'

    # --rate: replies of about 90 KB at 60000 bytes/s need about 1.5 s.
    "$IC" -q --json --rate 60000 127.0.0.1 "$SRV_PORT" 220 11 2>"$TEST_TMP/json"
    j=$(cat "$TEST_TMP/json")
    secs=$(field service_s) bytes=$(field bytes_received)
    check "inclient --rate 60000: $bytes bytes in $secs s, at most the rate" \
        awk -v b="$bytes" -v s="$secs" 'BEGIN { exit !(b > 50000 && b / s <= 60000 * 1.1) }'
    stop_server "$SRV_PID"
fi

# ---- kill_it -------------------------------------------------------------------
for mode in fine buffered; do
    if start_server "$mode"; then
        out=$("$KI" --json "$TEST_TMP/ki.json" --csv "$TEST_TMP/ki.csv" \
              127.0.0.1 "$SRV_PORT" 1500 8 2>&1)
        rc=$?
        echo "$out" | sed 's/^/#   /'
        expect_match "kill_it on $mode, 8 clients: verified, status 0" \
            "$rc $(echo "$out" | tail -1)" '^0 verified: [0-9]+ entr(y|ies), digest matches$'
        expect_eq "kill_it --csv: a row per client" "$(tail -n +2 "$TEST_TMP/ki.csv" | wc -l)" 8
        check "kill_it --json: has the verdict" grep -q '"verdict": "verified"' "$TEST_TMP/ki.json"
        out=$("$KI" 127.0.0.1 "$SRV_PORT" 100 2 2>&1)
        rc=$?
        expect_match "kill_it on a non-empty $mode server: not verified, status 3" \
            "$rc $(echo "$out" | tail -1)" '^3 not verified: the server held [0-9]+ entries'
        stop_server "$SRV_PID"
    fi
done

# A server killed in the middle of a run (slow links keep the run going).
if start_server fine; then
    "$KI" --rate 50k --timeout 30 127.0.0.1 "$SRV_PORT" 400 4 >"$TEST_TMP/out" 2>&1 &
    ki=$!
    sleep 1
    stop_server "$SRV_PID" KILL
    timeout 40 tail --pid=$ki -f /dev/null
    wait $ki
    rc=$?
    sed 's/^/#   /' "$TEST_TMP/out"
    expect_match "kill_it on a server killed mid-run: FAILED, status 1" \
        "$rc $(tail -1 "$TEST_TMP/out")" '^1 FAILED: .*(reset|closed|died)'
fi

# A frozen server: the watchdog must name it, within its bound.
if start_server fine; then
    "$KI" --rate 50k --hang 2 --timeout 30 127.0.0.1 "$SRV_PORT" 400 4 >"$TEST_TMP/out" 2>&1 &
    ki=$!
    sleep 1
    srv_signal STOP "$SRV_PID"
    t0=$(now)
    timeout 40 tail --pid=$ki -f /dev/null
    wait $ki
    rc=$?
    took=$(elapsed_ms "$t0")
    srv_signal CONT "$SRV_PID"
    sed 's/^/#   /' "$TEST_TMP/out"
    expect_match "kill_it on a frozen server: FAILED: server hung, with its pid" \
        "$rc $(tail -1 "$TEST_TMP/out")" "^1 FAILED: server hung.*pid $SRV_PID"
    check "kill_it gave up within 10 s of the freeze ($took ms)" [ "$took" -lt 10000 ]
    stop_server "$SRV_PID"
fi

# Frozen before kill_it starts: its first COUNT, bounded by --hang, gets
# no answer, and the run fails before any client starts (kill_it(1)).
if start_server fine; then
    srv_signal STOP "$SRV_PID"
    t0=$(now)
    out=$(timeout 30 "$KI" --hang 2 --timeout 30 127.0.0.1 "$SRV_PORT" 400 4 2>&1)
    rc=$? took=$(elapsed_ms "$t0")
    srv_signal CONT "$SRV_PID"
    expect_match "kill_it on a server frozen from the start: FAILED before the run" \
        "$rc $(tail -1 <<<"$out")" "^1 FAILED: COUNT failed: no reply within 2\\.0 s\$"
    check "... after --hang, not --timeout ($took ms)" [ "$took" -lt 5000 ]
    stop_server "$SRV_PID"
fi

# Nothing listening at all.
out=$("$KI" 127.0.0.1 1 10 2 2>&1); rc=$?
expect_match "kill_it with no server: FAILED, status 1" "$rc $out" '^1 .*FAILED: cannot reach'

# One --mix vocabulary: the named form is the positional one.
expect_eq "inputgen: --mix find=3,add=2,delete=1,print=1 is --mix 2:1:1:3" \
    "$("$BIN/inputgen" --mix find=3,add=2,delete=1,print=1 200 7 | md5sum)" \
    "$("$BIN/inputgen" --mix 2:1:1:3 200 7 | md5sum)"

finish
