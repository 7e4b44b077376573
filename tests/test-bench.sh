#!/bin/bash
# test-bench.sh -- ssn-bench over real TCP. Against ssnserver started on
# port 0 in both --io threads and --io events: exact request and reply
# counts under -P 1 and -P 16 for each mix, and the reply kinds checked
# against the server's own COUNT (after a run, COUNT = COUNT before +
# stored - deleted; with --new-keys no ADD is refused); --duration 1 ends
# in 1 to 1.5 s; the percentiles are ordered and printed with three
# significant digits; AUTH; a server that turns connections away. Against bench-fake (client/bench/bench_fake.c, a
# stand-in Redis or memcached): exact counts for the redis and memcache
# dialects, replies cut into 1..7-byte pieces, and a reply too many or a
# connection closed early failing the run. Bad arguments: exit 2 and one
# clear line. Takes about 10 to 20 s (two of them in --duration 1 runs).
source "$(dirname "$0")/lib/common.sh"

SB=$BIN/ssn-bench
FAKE=${BENCH_FAKE:-${BUILD:-build}/client/bench-fake}
for f in "$SB" "$FAKE"; do
    [[ -x $f ]] || make --no-print-directory -s "$f" >/dev/null 2>&1
    check "$f is built" test -x "$f" || finish
done

# run ARGS...: ssn-bench ARGS; OUT, ERR, RC and MS (its wall time).
run() {
    local t0
    t0=$(now)
    timeout 30 "$SB" "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null
    RC=$?
    MS=$(elapsed_ms "$t0")
    OUT=$(cat "$TEST_TMP/out") ERR=$(cat "$TEST_TMP/err")
}

# run_csv ARGS...: run --csv ARGS, and the row into R[column].
declare -A R
run_csv() {
    local -a h v
    local i
    run --csv "$@"
    R=()
    IFS=, read -r -a h < <(sed -n 1p "$TEST_TMP/out")
    IFS=, read -r -a v < <(sed -n 2p "$TEST_TMP/out")
    for i in "${!h[@]}"; do R[${h[$i]}]=${v[$i]-}; done
}

# exact DESC N: the run passed, sent and answered exactly N requests, and
# the kinds add up to N.
exact() {
    local sum=$(( ${R[stored]:-0} + ${R[exists]:-0} + ${R[found]:-0} +
                  ${R[deleted]:-0} + ${R[missing]:-0} + ${R[error]:-0} ))
    expect_eq "$1: exit 0, $2 sent, $2 answered, kinds add up, no error" \
        "$RC ${R[requests]-} ${R[replies]-} $sum ${R[error]-}" "0 $2 $2 $2 0"
    [[ $RC == 0 ]] || sed 's/^/#   /' <<<"$ERR" | head -n 3
}

# ordered DESC: p50 <= p90 <= p99 <= p99.9 <= max, all > 0.
ordered() {
    check "$1: 0 < p50 <= p90 <= p99 <= p99.9 <= max" \
        awk -v a="${R[p50_ms]-}" -v b="${R[p90_ms]-}" -v c="${R[p99_ms]-}" \
            -v d="${R[p99_9_ms]-}" -v e="${R[max_ms]-}" \
            'BEGIN { exit !(a > 0 && a <= b && b <= c && c <= d && d <= e) }'
}

# server_count: the server's COUNT, into COUNT, over a connection of this
# shell's (CONN, opened by the caller: no process per question).
server_count() {
    COUNT=""
    send_line "$CONN" COUNT && read_line "$CONN" 5 && COUNT=$LINE
}

# ---- the command line -------------------------------------------------------

run --help
expect_match "--help: exit 0, usage on stdout" "$RC:$OUT" "^0:usage: ssn-bench "
run -h
expect_match "-h is --help" "$RC:$OUT" "^0:usage: ssn-bench "
run -V
expect_match "-V: the version" "$RC:$OUT" "^0:ssn-bench [0-9.]+ \\("

# bad DESC WHAT ARGS...: exit 2, nothing on stdout, and one line
# "ssn-bench: WHAT..." (an ERE) followed by the hint.
bad() {
    local desc=$1 what=$2
    shift 2
    run "$@"
    expect_eq "$desc: exit 2, nothing on stdout" "$RC:$OUT" "2:"
    expect_match "$desc: says what is wrong" "$ERR" \
        "^ssn-bench: $what[^"$'\n'"]*"$'\n'"Try 'ssn-bench --help'\\.\$"
}
bad "-c 0" "--connections: '0' is not a number of connections" -c 0
bad "-P 5000" "--pipeline: '5000' is not a pipeline depth" -P 5000
bad "-n 1x" "--requests: '1x' is not" -n 1x
bad "--mix 1:2" "--mix: '1:2' is not add=N,find=N,delete=N or A:F:D weights" --mix 1:2
bad "--mix 0:0:0" "--mix: '0:0:0' is not" --mix 0:0:0
bad "--mix 1:2:3:4" "--mix: '1:2:3:4' is not" --mix 1:2:3:4
bad "--dialect memcached" "--dialect: 'memcached' is not a dialect" \
    --dialect memcached
bad "--duration 0" "--duration: '0' is not" --duration 0
bad "--keys 0" "--keys: '0' is not" --keys 0
bad "-p 70000" "--port: '70000' is not a port" -p 70000
bad "--server-pid of no process" "--server-pid: '4194304' is not" \
    --server-pid 4194304
bad "-t 4 -c 2" "--threads: 4 threads for 2 connections" -t 4 -c 2
bad "-n with --duration" "-n and --duration cannot go together" \
    -n 10 --duration 1
bad "--json with --csv" "--json and --csv cannot go together" --json --csv
bad "AUTH in memcache" "--password-file: the memcache dialect has no AUTH" \
    --dialect memcache --password-file /dev/null
bad "an operand" "takes no operands, only options: extra" extra
run --no-such-option
expect_match "--no-such-option: exit 2, named" "$RC:$ERR" \
    "^2:ssn-bench: .*'--no-such-option'"
run -p 1 -n 10 -c 1
expect_match "nothing listening: exit 1, says so" "$RC:$ERR" \
    "^1:ssn-bench: cannot connect to 127.0.0.1:1: Connection refused\$"

# ---- ssnserver, in both I/O models ----------------------------------------

# mixes IO: the four mixes at -P 1 and -P 16, each run checked against the
# server's COUNT.
mixes() {
    local io=$1 p mix before
    open_conn "$SRV_PORT"
    for p in 1 16; do
        for mix in 1:0:0 0:1:0 1:8:1 0:0:1; do
            server_count
            before=$COUNT
            run_csv -p "$SRV_PORT" -c 4 -t 2 -P "$p" -n 1000 --mix "$mix" \
                --keys 300
            exact "$io -P $p --mix $mix" 1000
            server_count
            expect_eq "$io -P $p --mix $mix: COUNT = before + stored - deleted" \
                "$COUNT" "$(( before + ${R[stored]:-0} - ${R[deleted]:-0} ))"
        done
    done
    # --new-keys: every ADD a real insert, on two threads at once, even
    # after a preload of the key space.
    server_count
    before=$COUNT
    run_csv -p "$SRV_PORT" -c 4 -t 2 -P 16 -n 2000 --mix 1:1:0 --keys 300 \
        --new-keys
    exact "$io --new-keys" 2000
    expect_eq "$io --new-keys: no ADD refused, the CSV says new_keys" \
        "${R[exists]-} ${R[new_keys]-}" "0 1"
    server_count
    expect_eq "$io --new-keys: COUNT = before + stored" \
        "$COUNT" "$(( before + ${R[stored]:-0} ))"
    close_conn "$CONN"
}

for io in threads events; do
    SSN_IO=$io start_server buffered || continue
    mixes "$io"

    run_csv -p "$SRV_PORT" -c 3 -P 8 -n 3000 --mix 0:1:0 --keys 500 \
        --preload 500 --server-pid "$SRV_PID"
    exact "$io --preload 500 then FIND only" 3000
    expect_eq "$io: after --preload, every FIND is found" "${R[found]-}" 3000
    ordered "$io -P 8"
    expect_match "$io --server-pid: CPU microseconds per request" \
        "${R[server_cpu_us_per_request]-}" '^[0-9]+(\.[0-9]+)?$'
    # The server's store lock over the run (STATS before and after, the
    # preload and the reads' own acquisitions left out): up to 32 FINDs a
    # hold (the default --batch) in both models, and with 8 in flight some
    # hold covers more than one.
    check "$io: the server's lock taken 94 to 2999 times (${R[lock_acquisitions]-})" \
        awk -v n="${R[lock_acquisitions]-}" 'BEGIN { exit !(n >= 94 && n < 3000) }'
    expect_match "$io: contended, wait and hold as numbers" \
        "${R[lock_contended]-}/${R[lock_wait_us]-}/${R[lock_hold_us]-}" \
        '^[0-9]+/[0-9]+/[1-9][0-9]*$'

    run_csv -p "$SRV_PORT" -c 4 -t 2 -P 4 --duration 1 --keys 1000
    expect_eq "$io --duration 1: exit 0, every request sent answered" \
        "$RC ${R[requests]-}" "0 ${R[replies]-x}"
    check "$io --duration 1: took 1000-1500 ms (took $MS)" \
        test "$MS" -ge 1000 -a "$MS" -le 1500
    check "$io --duration 1: reports 1 to 1.5 s (${R[seconds]-})" \
        awk -v s="${R[seconds]-}" 'BEGIN { exit !(s >= 1 && s <= 1.5) }'

    run -p "$SRV_PORT" -c 2 -P 4 -n 2000 --keys 1000
    lat=$(sed -n 's/^latency: *//p' <<<"$OUT")
    expect_match "$io: the text report's latency line" "$lat" \
        '^p50 .*, p90 .*, p99 .*, p99\.9 .*, max .*$'
    n=0
    sig3='^(0\.0*[1-9][0-9]{2}|[1-9]\.[0-9]{2}|[1-9][0-9]\.[0-9]|[1-9][0-9]{2})$'
    while read -r name value unit; do
        [[ $value =~ $sig3 && $unit =~ ^m?s$ ]] && n=$((n + 1))
    done < <(sed 's/, */\n/g' <<<"$lat")
    expect_eq "$io: five latencies, 3 significant digits each ($lat)" "$n" 5
    expect_eq "$io: nothing on stderr when it is no terminal" "$ERR" ""
    expect_match "$io: the text report's lock line, the share of the run held" \
        "$(grep '^lock:' <<<"$OUT")" \
        "^lock: +buffered server's store lock: [0-9]+ acquisitions?, [0-9.]+% contended; waited [0-9.]+ ms in all \\([0-9.]+ us each\\), held [0-9.]+ ms \\([0-9.]+ us each\\) = [0-9]+% of the run$"
    # The default 1:8:1 mix misses often: a miss is "not found", an ADD of
    # a present key "exists", and neither is called an error.
    expect_match "$io: the text report counts misses apart from errors" \
        "$(sed -n 's/^replies: *//p' <<<"$OUT")" \
        '^stored [0-9]+, exists [0-9]+, found [0-9]+, deleted [0-9]+, not found [1-9][0-9]*, error 0$'
    stop_server "$SRV_PID"
done

# The progress line, when stderr is a terminal (script(1) makes one).
if command -v script >/dev/null && start_server buffered; then
    script -qfec "$SB -p $SRV_PORT --duration 0.5 -c 2" /dev/null \
        >"$TEST_TMP/tty" 2>&1 </dev/null
    check "a progress line on a terminal" \
        grep -qE $'\r''[0-9]+ requests, [0-9]+ requests/s, 0\.[0-9] s' \
        "$TEST_TMP/tty"
    run -p "$SRV_PORT" -n 100 -c 1 --json
    json='^\{"dialect":"ssn",.*"requests":100,"replies":100,.*'
    json+='"latency_ms":\{"p50":[0-9.]+,.*\},"server_cpu_us_per_request":null\}$'
    check "--json: one object with the counts and latencies" \
        grep -qE "$json" "$TEST_TMP/out"
    check "--json: the server's lock figures" grep -qE \
        '"server_lock":\{"mode":"buffered","preload_included":false,"acquisitions":100,"contended":[0-9]+,"wait_us":[0-9]+,"hold_us":[0-9]+\}' \
        "$TEST_TMP/out"
    stop_server "$SRV_PID"
fi

# AUTH, and a server that turns connections away.
printf 'sekrit\n' >"$TEST_TMP/pw"
printf 'wrong\n' >"$TEST_TMP/pw2"
chmod 600 "$TEST_TMP/pw"        # the server refuses one others can read
if start_server buffered --password-file "$TEST_TMP/pw"; then
    run -p "$SRV_PORT" -n 100 -c 2
    expect_match "no password: exit 1, says the server wants one" "$RC:$ERR" \
        "^1:ssn-bench: run: .*wants a password"
    run -p "$SRV_PORT" -n 100 -c 2 --password-file "$TEST_TMP/pw2"
    expect_match "a wrong password: exit 1, AUTH refused" "$RC:$ERR" \
        "^1:ssn-bench: AUTH: .*AUTH refused: 'Error: invalid password'"
    run_csv -p "$SRV_PORT" -n 1000 -c 2 -P 16 --password-file "$TEST_TMP/pw"
    exact "--password-file: AUTH first, then the run" 1000
    stop_server "$SRV_PID"
fi
if start_server buffered --max-clients 2; then
    run -p "$SRV_PORT" -n 1000 -c 3
    expect_match "one connection too many: exit 1, the server's reason" \
        "$RC:$ERR" "^1:ssn-bench: run: connection 2: .*too many connections"
    stop_server "$SRV_PID"
fi

# ---- the redis and memcache dialects, against bench-fake ----------------

# fake DIALECT ARGS...: starts bench-fake; FAKE_PID and FAKE_PORT.
fake() {
    FAKE_PID="" FAKE_PORT=""
    if srv_start "$TEST_TMP/fake.out" "$TEST_TMP/fake.err" 5 "$FAKE" "$@"; then
        FAKE_PID=$SRV_PID FAKE_PORT=$SRV_PORT
    else
        not_ok "bench-fake $* starts"
        return 1
    fi
}

for d in redis memcache; do
    fake "$d" || continue
    for p in 1 16; do
        run_csv --dialect "$d" -p "$FAKE_PORT" -c 4 -t 2 -P "$p" -n 3000 \
            --keys 400 --mix 1:8:1
        exact "$d -P $p --mix 1:8:1" 3000
    done
    run_csv --dialect "$d" -p "$FAKE_PORT" -c 4 -P 16 -n 3000 --keys 400 \
        --preload 400 --mix 0:1:0
    exact "$d --preload 400 then GET only" 3000
    expect_eq "$d: every GET found its value" "${R[found]-}" 3000
    # One thread draws the same keys every run: the second DELETE run
    # finds none of them.
    run_csv --dialect "$d" -p "$FAKE_PORT" -c 2 -P 16 -n 800 --keys 400 \
        --mix 0:0:1
    check "$d: DELETE: deleted + missing = 800, 0 < deleted <= 400" \
        test $(( ${R[deleted]:-0} + ${R[missing]:-0} )) = 800 -a \
        "${R[deleted]:-0}" -gt 0 -a "${R[deleted]:-0}" -le 400
    run_csv --dialect "$d" -p "$FAKE_PORT" -c 2 -P 16 -n 800 --keys 400 \
        --mix 0:0:1
    expect_eq "$d: the same DELETEs again: all missing" \
        "${R[deleted]-} ${R[missing]-}" "0 800"
    srv_stop "$FAKE_PID"

    fake "$d" --split || continue
    run_csv --dialect "$d" -p "$FAKE_PORT" -c 2 -P 16 -n 1500 --keys 200 \
        --preload 100
    exact "$d, replies in 1..7-byte pieces" 1500
    srv_stop "$FAKE_PID"

    fake "$d" --extra 5 || continue
    run --dialect "$d" -p "$FAKE_PORT" -c 1 -P 1 -n 100
    fail="^1:ssn-bench: run: connection 0: "
    expect_match "$d: a reply too many at -P 1: exit 1, the reason" \
        "$RC:$ERR" "$fail$d: a reply with no request in flight"
    run --dialect "$d" -p "$FAKE_PORT" -c 1 -P 16 -n 100 --mix 1:1:1
    expect_match "$d: a reply too many at -P 16: exit 1, out of step" \
        "$RC:$ERR" "$fail(reply [0-9]+: $d: unexpected reply to |$d: a reply \
with no request in flight|$d: bytes after the last reply)"
    srv_stop "$FAKE_PID"

    fake "$d" --close-after 50 || continue
    run --dialect "$d" -p "$FAKE_PORT" -c 2 -P 1 -n 1000
    expect_match "$d: the server hangs up: exit 1, says so" "$RC:$ERR" \
        "^1:ssn-bench: run: connection [01]: (the server closed the \
connection|read: Connection reset|write: )"
    srv_stop "$FAKE_PID"
done

fake redis || finish
run_csv --dialect redis -p "$FAKE_PORT" -c 2 -n 500 \
    --password-file "$TEST_TMP/pw"
exact "redis --password-file: AUTH first, then the run" 500
run --dialect ssn -p "$FAKE_PORT" -c 1 -n 10
expect_match "the wrong dialect: exit 1, an unexpected reply" "$RC:$ERR" \
    "^1:ssn-bench: run: connection 0: reply 1: ssn: unexpected reply to "
srv_stop "$FAKE_PID"

finish
