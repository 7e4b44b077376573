#!/bin/bash
# test-ssn-cli.sh -- ssn-cli against real servers on port 0: one-shot
# requests and their exit statuses (a normal reply 0, an Error: reply 1, no
# server 1 naming HOST:PORT, bad options 2), multi-line replies printed
# whole, requests from a pipe, -r/-i, --pipe's counts of each reply kind,
# --latency --count, --stat's lines (and Ctrl-C ending -r -1 and --stat
# cleanly), the password from SSN_PASSWORD and from --password-file, and the
# prompt in a tmux pane: two requests, the first recalled with the Up arrow,
# and a history file of mode 0600 with no AUTH line in it. Against a broken
# server (tests/lib/fakesrv.py), ssn-cli and ssn-bench too: lines no request
# asked for, replies of no shape or full of escapes, a reply that drips in
# and never ends (--pipe --timeout, ssn-bench's 10 s hang watch), STATS lock
# figures that are no counts (ssn-bench's lock line), escapes in a later
# STATS line (ssn-bench, kill_it), no Bye after DONE (ssn-cli ends in 2 s),
# replies of no shape (inclient exits 1), COUNT and CHECK replies that
# only begin as sound ones (kill_it fails the run), STATS figures that
# disagree (not shown by kill_it nor ssn-bench), a drip (kill_it --hang).
# Every server and
# background client is started here and stopped by PID (tests/lib/common.sh).
# run-all: beside
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

CLI=$BIN/ssn-cli
PW=s3cret-Pw.42
unset SSN_PASSWORD SSN_CLI_HISTFILE     # the caller's must not leak in

# run ARGS...: ssn-cli with ARGS, stdin from /dev/null; OUT, ERR and RC.
run() {
    timeout 20 "$CLI" "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null
    RC=$? OUT=$(cat "$TEST_TMP/out") ERR=$(cat "$TEST_TMP/err")
}

# run_in FILE ARGS...: the same with stdin from FILE.
run_in() {
    local in=$1
    shift
    timeout 20 "$CLI" "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" <"$in"
    RC=$? OUT=$(cat "$TEST_TMP/out") ERR=$(cat "$TEST_TMP/err")
}

# stat_of PORT NAME: NAME's value in a STATS taken with bash's /dev/tcp.
stat_of() {
    converse_str "$1" "STATS\nDONE\n" "$TEST_TMP/stats.out"
    awk -v k="$2" '$1 == k { print $2 }' "$TEST_TMP/stats.out"
}

start_server buffered || finish
P=$SRV_PORT MAIN_PID=$SRV_PID

# ---- one request on the command line ---------------------------------------

run -p "$P" COUNT
expect_eq "COUNT on an empty store: prints 0, exit 0" "$RC:$OUT" "0:0"
run -p "$P" ADD John Smith 30 123-45-6789
expect_eq "ADD John Smith ...: the words make one request, OK, exit 0" \
    "$RC:$OUT" "0:OK"
model_add John Smith 30 123-45-6789
run -p "$P" FIND John Smith
expect_eq "FIND John Smith after the ADD: PRINT's line, exit 0" \
    "$RC:$OUT" "0:$(print_line John Smith 30 123-45-6789)"
run -h 127.0.0.1 --port "$P" ADD John Smith 41 999-99-9999
expect_eq "ADD of someone present: the Error: reply, exit 1" \
    "$RC:$OUT" "1:Error: John Smith already exists"
run -p "$P" FIND Jane Doe
expect_eq "FIND of someone absent: Error: ... not found, exit 1" \
    "$RC:$OUT" "1:Error: Jane Doe not found"
run -p "$P" BOGUS request
expect_eq "an unknown command: Error: Bad command, exit 1" \
    "$RC:$OUT" "1:Error: Bad command: BOGUS"
expect_eq "an error reply is not an error of ssn-cli: nothing on stderr" \
    "$ERR" ""

# Multi-line replies, printed whole and nothing more.
model_add Ann Lee 41 111-22-3333
run -p "$P" ADD Ann Lee 41 111-22-3333
run -p "$P" PRINT
expect_eq "PRINT: the whole listing, head to tail" "$OUT" "$(model_print)"
run -p "$P" HELP
expect_eq "HELP: the server's text to its END" "$OUT" \
    "$(printf 'HELP\n' | "$BIN/ssnserver-buffered" --stdin -q 2>/dev/null)"
run -p "$P" STATS
expect_match "STATS: from its first name to END" "$RC:$OUT" \
    $'^0:mode buffered\n.*\nentries 2\n.*\nEND$'
run -p "$P" TREE 2
expect_match "TREE 2: the DOT drawing up to its END line" "$RC:$OUT" \
    $'^0:digraph rbtree \\{\n.*\n\\}\nEND$'
run -p "$P" tree 99
expect_eq "TREE 99: the error, exit 1" "$RC:$OUT" \
    "1:Error: bad depth: a whole number from 1 to 10"

# No server: a clear message naming the address, exit 1.
start_server buffered || finish
GONE=$SRV_PORT
stop_server "$SRV_PID"
run -p "$GONE" COUNT
expect_eq "no server at the port: exit 1, nothing on stdout" "$RC:$OUT" "1:"
expect_match "no server: the message names 127.0.0.1:PORT and the reason" \
    "$ERR" "^ssn-cli: cannot connect to 127\\.0\\.0\\.1:$GONE: Connection refused\$"

# Bad options: exit 2, the option and the value named.
run -p 99999 COUNT
expect_eq "-p 99999: exit 2" "$RC" 2
expect_match "-p 99999: names --port and the value" "$ERR" \
    "^ssn-cli: --port: '99999' is not a port from 1 to 65535"$'\n'"Try 'ssn-cli --help'\\.\$"
run -p "$P" -r 0 COUNT
expect_match "-r 0: exit 2, names --repeat and '0'" "$RC:$ERR" \
    "^2:ssn-cli: --repeat: '0' is not "
run -p "$P" -r 2 -i soon COUNT
expect_match "-i soon: exit 2, names --interval and 'soon'" "$RC:$ERR" \
    "^2:ssn-cli: --interval: 'soon' is not "
run -p "$P" --stat COUNT
expect_match "--stat with a request: exit 2, says why" "$RC:$ERR" \
    "^2:ssn-cli: --stat and --latency take no request"
run -h
expect_match "-h is the host, so -h alone wants a value: exit 2" "$RC:$ERR" \
    "^2:ssn-cli: option requires an argument -- 'h'"
run --help
expect_match "--help: the usage on stdout, exit 0" "$RC:$OUT" \
    "^0:usage: ssn-cli "
expect_match "--help: says what the exit statuses are" "$OUT" \
    "Exit status: 0 .* 1 .*'Error: \\.\\.\\.' line.* 2 for bad arguments"

# ---- requests from a pipe -----------------------------------------------------

printf 'COUNT\n\n  \nFIND Ann Lee\r\nQUIT\nCOUNT\n' >"$TEST_TMP/lines"
run_in "$TEST_TMP/lines" -p "$P"
expect_eq "requests from a pipe: each reply in turn, blanks skipped, QUIT ends" \
    "$RC:$OUT" "0:2"$'\n'"$(print_line Ann Lee 41 111-22-3333)"$'\n'"Bye"
printf 'COUNT\nFIND No Body\nCOUNT\n' >"$TEST_TMP/lines-err"
run_in "$TEST_TMP/lines-err" -p "$P"
expect_eq "from a pipe: an Error: reply among them, exit 1, every reply printed" \
    "$RC:$OUT" "1:2"$'\n'"Error: No Body not found"$'\n'"2"

# ---- -r and -i ----------------------------------------------------------------

t0=$(now)
run -p "$P" -r 3 -i 0.1 COUNT
ms=$(elapsed_ms "$t0")
expect_eq "-r 3 -i 0.1 COUNT: three replies, exit 0" "$RC:$OUT" \
    "0:2"$'\n'"2"$'\n'"2"
check "-r 3 -i 0.1: two waits of 0.1 s between the three ($ms ms)" \
    test "$ms" -ge 200
run -p "$P" -r 2 FIND No Body
expect_eq "-r 2 with an error reply: both printed, exit 1" "$RC:$OUT" \
    "1:Error: No Body not found"$'\n'"Error: No Body not found"

# -r -1 until Ctrl-C: a background client (stopped by PID, SIGINT) that
# also gives --stat below something to count.
srv_launch "$TEST_TMP/load.out" "$TEST_TMP/load.err" \
    "$CLI" -p "$P" -r -1 -i 0.005 COUNT
LOAD_PID=$SRV_PID

# ---- --stat ---------------------------------------------------------------

timeout --preserve-status -s INT 2.6 "$CLI" -p "$P" --stat \
    >"$TEST_TMP/stat.out" 2>"$TEST_TMP/stat.err"
RC=$?
expect_eq "--stat for 2.6 s, then Ctrl-C: exit 0, nothing on stderr" \
    "$RC:$(cat "$TEST_TMP/stat.err")" "0:"
expect_match "--stat: the header first" "$(head -n 1 "$TEST_TMP/stat.out")" \
    "^ +people +clients +requests +req/s +lock acq/s +wait us/s +held %\$"
nlines=$(($(wc -l <"$TEST_TMP/stat.out") - 1))
check "--stat: a line a second, two in 2.6 s (got $nlines)" test "$nlines" -eq 2
read -r people clients reqs reqps acqps waitus held < <(sed -n 2p "$TEST_TMP/stat.out")
expect_eq "--stat line: people is the store's count" "${people:-}" 2
check "--stat line: clients counts the -r client too (${clients:-})" \
    test "${clients:-0}" -ge 2
check "--stat line: requests/s from the -r client's ~200/s (${reqps:-})" \
    test "${reqps:-0}" -ge 50 -a "${reqps:-0}" -le 400
check "--stat line: requests is a total at least the rate (${reqs:-})" \
    test "${reqs:-0}" -ge "${reqps:-1}"
check "--stat line: lock acquisitions/s at least one a request (${acqps:-})" \
    test "${acqps:-0}" -ge 50
expect_match "--stat line: wait us/s a number, held % a share" \
    "${waitus:-}:${held:-}" '^[0-9]+:[0-9]+\.[0-9]$'
run -p "$P" --stat --count 3 -i 0.2
expect_eq "--stat --count 3 -i 0.2: the header and three lines, exit 0" \
    "$RC:$(wc -l <"$TEST_TMP/out")" "0:4"

srv_stop "$LOAD_PID" INT 3
expect_eq "-r -1 COUNT: Ctrl-C (SIGINT) ends it, exit 0" "$SRV_HOW:$SRV_RC" \
    "stopped:0"
n=$(grep -c -x 2 "$TEST_TMP/load.out")
check "-r -1 COUNT: printed a reply a request until then ($n)" \
    test "$n" -ge 100 -a "$n" -eq "$(wc -l <"$TEST_TMP/load.out")"

# ---- --latency ------------------------------------------------------------

before=$(stat_of "$P" commands_total)
run -p "$P" --latency --count 50 -i 0.001
after=$(stat_of "$P" commands_total)
expect_match "--latency --count 50: one line of ms, exit 0" "$RC:$OUT" \
    '^0:min: [0-9.]+, avg: [0-9.]+, p50: [0-9.]+, p99: [0-9.]+, max: [0-9.]+ ms \(50 samples\)$'
mn=1 av=0 p50=0 p99=0 mx=0
if [[ $OUT =~ ^min:\ ([0-9.]+),\ avg:\ ([0-9.]+),\ p50:\ ([0-9.]+),\ p99:\ ([0-9.]+),\ max:\ ([0-9.]+) ]]; then
    mn=${BASH_REMATCH[1]} av=${BASH_REMATCH[2]} p50=${BASH_REMATCH[3]}
    p99=${BASH_REMATCH[4]} mx=${BASH_REMATCH[5]}
fi
check "--latency: 0 < min <= p50 <= p99 <= max, min <= avg <= max" \
    awk -v a="$mn" -v v="$av" -v b="$p50" -v c="$p99" -v d="$mx" \
        'BEGIN { exit !(a > 0 && a <= b && b <= c && c <= d && a <= v && v <= d) }'
check "--latency: the server answered the 50 COUNTs ($before -> $after)" \
    test "$((after - before))" -ge 50

# ---- --pipe ---------------------------------------------------------------

# Every kind of reply, counted exactly: ok 9, not found 2, exists 2,
# errors 3 (the blank line is not sent).
cat >"$TEST_TMP/pipe.txt" <<'EOF'
ADD Amy Pond 30 222-33-4444
ADD Rory Pond 31 222-33-5555
ADD Amy Pond 30 222-33-4444
ADD John Smith 1 000-00-0000
FIND Amy Pond
FIND Clara Oswald
DELETE Clara Oswald
DELETE Rory Pond

BOGUS
ADD Bad Age 151 111-11-1111
FIND OnlyOne
PRINT
TREE 3
STATS
HELP
COUNT
EOF
run_in "$TEST_TMP/pipe.txt" -p "$P" --pipe
expect_eq "--pipe: the counts of each reply kind, exit 1 (three errors)" \
    "$RC:$OUT" \
    "1:replies: 16, ok: 9, not found: 2, exists: 2, errors: 3"
run -p "$P" COUNT
expect_eq "--pipe: the store changed as the requests said (2 + Amy Pond)" \
    "$OUT" 3

# A bigger file, pipelined: every reply counted, no errors, exit 0.
for ((i = 0; i < 3000; i++)); do
    printf 'ADD F%d Pipe %d 123-45-6789\n' "$i" $((i % 100))
done >"$TEST_TMP/big.txt"
for ((i = 0; i < 3000; i += 2)); do
    printf 'DELETE F%d Pipe\n' "$i"
done >>"$TEST_TMP/big.txt"
run_in "$TEST_TMP/big.txt" -p "$P" --pipe
expect_eq "--pipe: 4500 requests, all ok, exit 0" "$RC:$OUT" \
    "0:replies: 4500, ok: 4500, not found: 0, exists: 0, errors: 0"
# Now the odd ones are there and the even ones are not.
for ((i = 0; i < 3000; i++)); do
    if ((i % 2)); then
        printf 'ADD F%d Pipe 7 123-45-6789\n' "$i"
    else
        printf 'DELETE F%d Pipe\n' "$i"
    fi
done >"$TEST_TMP/again.txt"
run_in "$TEST_TMP/again.txt" -p "$P" --pipe
expect_eq "--pipe: exists and not found are counted, and are no errors: exit 0" \
    "$RC:$OUT" \
    "0:replies: 3000, ok: 0, not found: 1500, exists: 1500, errors: 0"
run_in "$TEST_TMP/big.txt" -p "$GONE" --pipe
expect_match "--pipe to no server: exit 1, the address named" "$RC:$ERR" \
    "^1:ssn-cli: cannot connect to 127\\.0\\.0\\.1:$GONE: "

# ---- the password ---------------------------------------------------------

PWFILE=$TEST_TMP/password
(umask 077; printf '%s\n' "$PW" >"$PWFILE")
expect_eq "the password file is mode 0600" "$(stat -c %a "$PWFILE")" 600
if start_server buffered --password-file "$PWFILE"; then
    SP=$SRV_PORT SECURE_PID=$SRV_PID
    run -p "$SP" COUNT
    expect_eq "no password: the server's refusal, exit 1" "$RC:$OUT" \
        "1:Error: authentication required"
    expect_match "no password: a hint to give one" "$ERR" \
        "--password-file FILE or set SSN_PASSWORD"
    SSN_PASSWORD=$PW run -p "$SP" ADD Amy Pond 30 222-33-4444
    expect_eq "SSN_PASSWORD: AUTH first, then the request: OK, exit 0" \
        "$RC:$OUT" "0:OK"
    run -p "$SP" --password-file "$PWFILE" COUNT
    expect_eq "--password-file: AUTH first, then COUNT: 1, exit 0" \
        "$RC:$OUT" "0:1"
    SSN_PASSWORD=wrong-one run -p "$SP" --password-file "$PWFILE" COUNT
    expect_eq "--password-file wins over SSN_PASSWORD" "$RC:$OUT" "0:1"
    SSN_PASSWORD=wrong-one run -p "$SP" COUNT
    expect_eq "a wrong SSN_PASSWORD: exit 1, nothing on stdout" "$RC:$OUT" "1:"
    expect_match "a wrong SSN_PASSWORD: the refusal said, not the password" \
        "$ERR" "^ssn-cli: the server refused AUTH: it answered 'Error: invalid password'\$"
    SSN_PASSWORD="two words" run -p "$SP" COUNT
    expect_match "SSN_PASSWORD with a space: exit 1, what is wrong, named" \
        "$RC:$ERR" "^1:ssn-cli: SSN_PASSWORD: the password has a space or tab"
    check "... and the password is not in the message" \
        eval '! grep -q "two words" "$TEST_TMP/err"'
    run -p "$SP" --password-file "$TEST_TMP/no-such-file" COUNT
    expect_match "a missing password file: exit 1, the file named" "$RC:$ERR" \
        "^1:ssn-cli: --password-file: cannot read $TEST_TMP/no-such-file: "
    printf 'COUNT\nADD Amy Pond 30 222-33-4444\nFIND Amy Pond\n' \
        >"$TEST_TMP/secure.txt"
    SSN_PASSWORD=$PW run_in "$TEST_TMP/secure.txt" -p "$SP" --pipe
    expect_eq "--pipe with SSN_PASSWORD: AUTH first, then the counts" \
        "$RC:$OUT" "0:replies: 3, ok: 2, not found: 0, exists: 1, errors: 0"
    run_in "$TEST_TMP/secure.txt" -p "$SP" --pipe
    expect_eq "--pipe with no password: fails, exit 1" "$RC" 1
    expect_match "--pipe with no password: says the server wants one" "$ERR" \
        "requires a password"
    run -p "$SP" --password-file "$PWFILE" --stat --count 1 -i 0.1
    expect_match "--stat with --password-file: a line with 1 person, exit 0" \
        "$RC:$(sed -n 2p "$TEST_TMP/out")" "^0: +1 +1 "
    SSN_PASSWORD=$PW run -p "$SP" --latency --count 5 -i 0
    expect_match "--latency with SSN_PASSWORD: 5 samples, exit 0" "$RC:$OUT" \
        "^0:min: .*\\(5 samples\\)\$"
    run -p "$SP" --latency --count 5
    expect_match "--latency with no password: exit 1, says why" "$RC:$ERR" \
        "^1:ssn-cli: COUNT got an error reply \\(the server wants a password"
fi

# ---- a broken server (tests/lib/fakesrv.py) ---------------------------------

# start_fake MODE: the fake on a port of its own, stopped by PID at exit
# (stop_fakes); FAKE_PORT, or 1.
FAKE_PIDS=()
stop_fakes() { (( ${#FAKE_PIDS[@]} )) && kill "${FAKE_PIDS[@]}" 2>/dev/null; true; }
srv_on_exit stop_fakes
start_fake() {
    local i line
    python3 tests/lib/fakesrv.py "$1" 30 >"$TEST_TMP/fake-$1" 2>/dev/null &
    FAKE_PIDS+=($!)
    for ((i = 0; i < 100; i++)); do
        line=$(head -n 1 "$TEST_TMP/fake-$1" 2>/dev/null)
        [[ $line == PORT\ * ]] && { FAKE_PORT=${line#PORT }; return 0; }
        sleep 0.05
    done
    return 1
}

# kill_it_against MODE: kill_it's 2 clients x 50 against a fake of MODE;
# its output in $TEST_TMP/ki, its status in rc.
kill_it_against() {
    start_fake "$1"
    timeout 30 "$BIN/kill_it" 127.0.0.1 "$FAKE_PORT" 50 2 >"$TEST_TMP/ki" 2>&1
    rc=$?
}

if ! command -v python3 >/dev/null 2>&1; then
    ok "# SKIP python3 is not installed: no broken server to test against"
elif ! start_fake extra; then
    not_ok "tests/lib/fakesrv.py starts"
else
    printf 'COUNT\nCOUNT\nCOUNT\n' >"$TEST_TMP/counts"
    run_in "$TEST_TMP/counts" -p "$FAKE_PORT" --timeout 5
    expect_match "a reply with a line too many: the next request says so, exit 1" \
        "$RC:$OUT:$ERR" "^1:3:ssn-cli: 127\\.0\\.0\\.1:$FAKE_PORT: the server sent lines no request asked for\$"
    start_fake hello
    run -p "$FAKE_PORT" --timeout 5 COUNT
    expect_eq "a reply of no shape (hello to COUNT): printed, exit 1" \
        "$RC:$OUT" "1:hello"
    run -p "$FAKE_PORT" --timeout 5 --latency --count 3
    expect_match "--latency: a reply that is no count, exit 1" "$RC:$ERR" \
        "^1:ssn-cli: COUNT got a reply that is no count"
    start_fake escape
    run -p "$FAKE_PORT" --timeout 5 FIND a b
    expect_eq "escapes in a reply reach no terminal: C0, C1 and lone bytes as ?" \
        "$RC:$OUT" "1:Error: ?]0;pwned??[2J??31m?1mred?[0m Zo"$'\xc3\xab'
    start_fake drip
    t0=$(now)
    run_in "$TEST_TMP/counts" -p "$FAKE_PORT" --pipe --timeout 2
    took=$(elapsed_ms "$t0")
    expect_match "--pipe --timeout 2: a reply that drips in ends it, exit 1" \
        "$RC:$ERR" "^1:.*server hung: no reply for 2\\.[0-9] s"
    check "... after 2 s, not held off by the drip ($took ms)" \
        test "$took" -lt 4000
    start_fake escape
    timeout 20 "$BIN/ssn-bench" -p "$FAKE_PORT" -c 1 -P 1 -n 5 --keys 5 \
        >"$TEST_TMP/bench" 2>&1
    expect_eq "ssn-bench's first error reply: no escape either" \
        "$(grep -a '^first error reply' "$TEST_TMP/bench")" \
        "first error reply: Error: ?]0;pwned??[2J??31m?1mred?[0m Zo"$'\xc3\xab'
    # ssn-bench's hang watch (--hang, 10 s by default) from the last whole
    # reply. The memcache dialect, which reads no STATS: the ssn dialect's
    # STATS before the run would drip too, for its own 5 s.
    start_fake drip
    t0=$(now)
    timeout 15 "$BIN/ssn-bench" --dialect memcache -p "$FAKE_PORT" -c 1 \
        -n 1 --hang 2 >"$TEST_TMP/bench" 2>"$TEST_TMP/bench.err"
    rc=$? took=$(elapsed_ms "$t0")
    expect_eq "ssn-bench --hang 2: a reply that drips in fails the run, exit 1" \
        "$rc:$(cat "$TEST_TMP/bench.err")" \
        "1:ssn-bench: run: connection 0: no reply for 2.0 s with 1 request in flight"
    check "... after 2 s, not held off by the drip ($took ms)" \
        test "$took" -ge 2000 -a "$took" -lt 4500
    # STATS whose lock figures are no counts (-1, 23 digits): after the
    # run (the fake's first STATS, before it, has counts), then before the
    # next. The run is not failed for it; the lock line says why it has no
    # figures, and none wrapped past 2^64 is printed.
    start_fake stats
    for when in after before; do
        timeout 20 "$BIN/ssn-bench" -p "$FAKE_PORT" -c 1 -n 5 --mix 1:0:0 \
            >"$TEST_TMP/bench" 2>"$TEST_TMP/bench.err"
        rc=$?
        expect_eq "ssn-bench: STATS $when the run with lock figures -1 and 23 digits: not read, exit 0" \
            "$rc:$(grep -a '^lock:' "$TEST_TMP/bench")" \
            "0:lock:      not read: STATS has a lock figure that is no count: not ssnserver?"
        check "... no figure past 2^64 printed" \
            eval '! grep -q 18446744 "$TEST_TMP/bench" "$TEST_TMP/bench.err"'
    done
    # Escapes in a STATS line after the first (its mode): every line of
    # the block is made ASCII before ssn-bench, kill_it or --stat shows it.
    start_fake stats-escape
    timeout 20 "$BIN/ssn-bench" -p "$FAKE_PORT" -c 1 -n 5 --mix 1:0:0 \
        >"$TEST_TMP/bench" 2>&1
    check "ssn-bench: escapes in STATS's mode reach no terminal" \
        eval '! LC_ALL=C grep -q $'"'"'[\x1b\x07\x9b]'"'"' "$TEST_TMP/bench"'
    expect_match "... shown as ?" "$(grep -a '^lock:' "$TEST_TMP/bench")" \
        '\?\]0;pwned\?\?\[2J'
    timeout 20 "$BIN/kill_it" 127.0.0.1 "$FAKE_PORT" 5 1 >"$TEST_TMP/ki" 2>&1
    check "kill_it: escapes in STATS's mode reach no terminal" \
        eval '! LC_ALL=C grep -q $'"'"'[\x1b\x07\x9b]'"'"' "$TEST_TMP/ki"'
    # A whole reply, then no Bye and no close: ssn-cli with no --timeout
    # still ends, after ctl_close's 2 s.
    start_fake nodone
    t0=$(now)
    run -p "$FAKE_PORT" COUNT
    took=$(elapsed_ms "$t0")
    expect_eq "a server that never answers DONE: the reply printed, exit 0" \
        "$RC:$OUT" "0:0"
    check "... within ctl_close's 2 s, not never ($took ms)" test "$took" -lt 4000
    # kill_it against a store whose COUNT and CHECK replies only begin as
    # sound ones ("N lost?", "OKAY? NO: ..."): not verified.
    kill_it_against liar
    expect_match "kill_it: 'OKAY? NO' from CHECK and 'N lost?' from COUNT fail the run" \
        "$rc:$(grep -a '^FAILED' "$TEST_TMP/ki")" \
        "^1:FAILED: tree invariant broken: CHECK said 'OKAY\\? NO: red node with red child'"
    # STATS figures that no ssnserver gives (7 contended of 3, a p99 past
    # the longest wait): kill_it verifies the store and shows no lock
    # figures, ssn-bench does not read them.
    kill_it_against oddstats
    expect_match "kill_it: STATS with 7 contended of 3: verified, no lock figures" \
        "$rc:$(grep -a '^lock:' "$TEST_TMP/ki")" \
        '^0:lock: no figures \(STATS has more contended acquisitions than acquisitions: not ssnserver\?\)$'
    timeout 20 "$BIN/ssn-bench" -p "$FAKE_PORT" -c 1 -n 5 --mix 1:0:0 \
        >"$TEST_TMP/bench" 2>&1
    expect_eq "ssn-bench: the same STATS: not read" \
        "$(grep -a '^lock:' "$TEST_TMP/bench")" \
        "lock:      not read: STATS has more contended acquisitions than acquisitions: not ssnserver?"
    # kill_it's --hang counts whole replies, not bytes: a reply that drips
    # in and never ends is a hang after 2 s, not a run out of time.
    start_fake driprun
    t0=$(now)
    timeout 30 "$BIN/kill_it" --hang 2 --timeout 15 127.0.0.1 "$FAKE_PORT" 5 1 \
        >"$TEST_TMP/ki" 2>&1
    rc=$? took=$(elapsed_ms "$t0")
    expect_match "kill_it --hang 2: a reply that drips in is a hang, exit 1" \
        "$rc:$(grep -a '^FAILED' "$TEST_TMP/ki")" '^1:FAILED: server hung: no reply for 2 s'
    check "... after 2 s, not the 15 s time limit ($took ms)" test "$took" -lt 6000
    # inclient: replies of no shape ("hello" to COUNT) fail it. (Lines no
    # request asked for may come after inclient has its replies and
    # closes: not seen, so not counted.)
    start_fake hello
    printf 'COUNT\nCOUNT\n' | timeout 20 "$BIN/inclient" 127.0.0.1 "$FAKE_PORT" - \
        >"$TEST_TMP/inc" 2>"$TEST_TMP/inc.err"
    rc=$?
    expect_match "inclient: replies of no shape, exit 1, saying so" \
        "$rc:$(tail -1 "$TEST_TMP/inc.err")" \
        '^1:inclient: FAILED: [0-9]+ replies of no known shape or unasked for$'
fi

# ---- the prompt, in a terminal tmux drives ----------------------------------

if ! command -v tmux >/dev/null 2>&1; then
    ok "# SKIP tmux is not installed (tools/install-deps installs it)"
    finish
fi

# A tmux server of our own, on a socket in the scratch directory: it can be
# killed whole without touching anybody else's tmux.
TMUX_SOCK=$TEST_TMP/tmux.sock
tm() { tmux -S "$TMUX_SOCK" "$@"; }
kill_tmux() { tm kill-server >/dev/null 2>&1; }
srv_on_exit kill_tmux
unset TMUX
PANE=$TEST_TMP/pane.txt
HOME_DIR=$TEST_TMP/home
HIST=$HOME_DIR/.ssn_cli_history
mkdir -p "$HOME_DIR"

screen() { tm capture-pane -p -t "$1" >"$PANE" 2>/dev/null; }

# wait_screen SESSION DESC TEST...: polls the pane every 50 ms, for at most
# 5 s, until TEST (run with the screen in $PANE) succeeds; ok or not ok.
wait_screen() {
    local s=$1 desc=$2 i
    shift 2
    for ((i = 0; i < 100; i++)); do
        screen "$s"
        if "$@"; then ok "$desc"; return 0; fi
        sleep 0.05
    done
    not_ok "$desc"
    sed 's/^/#   pane: /' "$PANE" | grep -v '^#   pane: $' | tail -n 12
    return 1
}
has_line() { grep -qx -- "$1" "$PANE"; }
# The line being edited: the pane's last line that is not blank.
editing() { [[ $(grep -v '^ *$' "$PANE" | tail -n 1) == "$1" ]]; }
has_text() { grep -qF -- "$1" "$PANE"; }
count_of() { [[ $(grep -cxF -- "$1" "$PANE") -ge $2 ]]; }
# exited SESSION STATUS: ssn-cli in SESSION has exited with STATUS. The
# wrapper writes it: tmux 3.3 does not always record a pane's status.
exited() { [[ $(cat "$TEST_TMP/$1.rc" 2>/dev/null) == "$2" ]]; }

# start_prompt SESSION PORT: ssn-cli at a prompt, HOME in the scratch
# directory, no password from the environment; its exit status goes to
# $TEST_TMP/SESSION.rc.
cat >"$TEST_TMP/prompt.sh" <<'EOF'
rc=$1 home=$2
shift 2
env -u SSN_PASSWORD -u SSN_CLI_HISTFILE HOME="$home" "$@"
echo $? >"$rc"
EOF
start_prompt() {
    TERM=${TERM:-xterm} tm new-session -d -s "$1" -x 120 -y 30 \
        "sh '$TEST_TMP/prompt.sh' '$TEST_TMP/$1.rc' '$HOME_DIR' '$PWD/$CLI' -p $2" \
        </dev/null &&
        tm set-option -t "$1" remain-on-exit on >/dev/null  # its last words
}

if [[ -n ${SP:-} ]] && start_prompt cli "$SP"; then
    wait_screen cli "the prompt shows HOST:PORT> " has_line "127.0.0.1:$SP>"
    # The password typed at the prompt: answered, and kept out of the history.
    tm send-keys -t cli "AUTH $PW" Enter
    wait_screen cli "AUTH typed at the prompt: OK" has_line OK
    tm send-keys -t cli 'ADD Rory Pond 31 222-33-5555' Enter
    wait_screen cli "the first request, ADD: OK" count_of OK 2
    tm send-keys -t cli 'COUNT' Enter
    wait_screen cli "the second request, COUNT: 2" has_line 2
    # Up twice: COUNT, then the ADD; a third Up finds nothing older (the
    # AUTH is not in the history), so Enter sends the ADD again.
    tm send-keys -t cli Up Up Up
    wait_screen cli "the Up arrow recalls the first request onto the prompt" \
        editing "127.0.0.1:$SP> ADD Rory Pond 31 222-33-5555"
    tm send-keys -t cli Enter
    wait_screen cli "... and Enter sends it: Rory Pond already exists" \
        has_line "Error: Rory Pond already exists"
    tm send-keys -t cli 'PRINT' Enter
    wait_screen cli "PRINT at the prompt: the listing to its tail" \
        has_line "$TAIL_LINE"
    tm send-keys -t cli 'QUIT' Enter
    wait_screen cli "QUIT: Bye" has_line Bye
    wait_screen cli "QUIT: ssn-cli exits 0" exited cli 0
    if [[ -f $HIST ]]; then
        expect_eq "the history file is mode 0600" "$(stat -c %a "$HIST")" 600
        check "the history holds the requests typed" \
            grep -q 'COUNT' "$HIST"
        check "the history holds no AUTH line" \
            eval '! grep -qi "auth" "$HIST"'
        check "the history holds no password" eval '! grep -qF "$PW" "$HIST"'
    else
        not_ok "the prompt wrote its history to \$HOME/.ssn_cli_history"
    fi
    kill_tmux
fi

# Ctrl-D ends the prompt, and the history is read back by the next one.
if start_prompt cli2 "$P"; then
    wait_screen cli2 "a second prompt starts" has_line "127.0.0.1:$P>"
    tm send-keys -t cli2 Up
    wait_screen cli2 "the Up arrow recalls the last session's last request" \
        editing "127.0.0.1:$P> QUIT"
    tm send-keys -t cli2 C-u C-d
    wait_screen cli2 "Ctrl-D ends the prompt, exit 0" exited cli2 0
    kill_tmux
fi

# A prompt with no server: it says so, and the prompt says it too.
if start_prompt cli3 "$GONE"; then
    wait_screen cli3 "no server: the message names 127.0.0.1:PORT" \
        has_text "cannot connect to 127.0.0.1:$GONE"
    wait_screen cli3 "no server: the prompt says not connected" \
        has_line "not connected>"
    kill_tmux
fi

# A reply that waits for another client's turn (serial): after 2 s the
# prompt says why it may be waiting, and the reply shows once the other
# client is gone.
if start_server serial; then
    SERIAL_PID=$SRV_PID
    open_conn "$SRV_PORT"; first=$CONN
    send_line "$first" COUNT
    read_line "$first" 5
    if start_prompt cli4 "$SRV_PORT"; then
        wait_screen cli4 "serial: a second prompt starts" \
            has_line "127.0.0.1:$SRV_PORT>"
        tm send-keys -t cli4 COUNT Enter
        wait_screen cli4 "serial: another client's turn, so a word after 2 s" \
            has_text "(no reply after 2 s: the server is busy, or serves one client at a time"
        send_line "$first" QUIT
        wait_screen cli4 "serial: the reply once the other client has quit" \
            has_line 0
        kill_tmux
    fi
    close_conn "$first"
    stop_server "$SERIAL_PID"
fi

# Requests from a pipe keep no history.
rm -f "$HIST"
HOME=$HOME_DIR run_in "$TEST_TMP/lines" -p "$P"
check "requests from a pipe write no history file" test ! -e "$HIST"

stop_server "$MAIN_PID"
expect_eq "the server stops cleanly after it all" "$STOP_RC" 0
finish
