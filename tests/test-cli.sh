#!/bin/bash
# test-cli.sh -- one command-line style across the suite's programs (all
# but the server): --help/-h and --version/-V exit 0, the version is the one
# in common/version.h, an unknown option and a bad value exit 2 with a
# message naming them; then `make install' into a staging directory, the
# installed programs and pages work, and `make uninstall' leaves no file.
# Also: bench-echo -m threads schedules its threads as ssnserver does.
source "$(dirname "$0")/lib/common.sh"

PROGS=(inputgen inclient kill_it ssn-cli bench-hash bench-log bench-wakeup bench-echo)
VERSION=$(sed -n 's/^#define SSN_VERSION *"\([^"]*\)".*/\1/p' common/version.h)
SUITE=$(sed -n 's/^#define SSN_SUITE *"\([^"]*\)".*/\1/p' common/version.h)
check "common/version.h defines SSN_VERSION and SSN_SUITE" \
    test -n "$VERSION" -a -n "$SUITE"

# run PROG ARGS...: OUT, ERR and RC of one run, stdin from /dev/null.
run() {
    timeout 10 "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null
    RC=$? OUT=$(cat "$TEST_TMP/out") ERR=$(cat "$TEST_TMP/err")
}

# ---- --version, --help, bad options -------------------------------------

for p in "${PROGS[@]}"; do
    for v in --version -V; do
        run "$BIN/$p" $v
        expect_eq "$p $v: exit 0" "$RC" 0
        expect_eq "$p $v: prints the version of common/version.h" \
            "$OUT" "$p $VERSION ($SUITE)"
    done
    for h in --help -h; do
        # ssn-cli's -h is the host, as redis-cli's: only --help is help.
        [[ $p == ssn-cli && $h == -h ]] && continue
        run "$BIN/$p" $h
        expect_eq "$p $h: exit 0" "$RC" 0
        expect_match "$p $h: usage on stdout, nothing on stderr" \
            "$OUT|$ERR" "^usage: $p .*\\|\$"
    done
    run "$BIN/$p" --no-such-option
    expect_eq "$p --no-such-option: exit 2" "$RC" 2
    expect_match "$p --no-such-option: says so, under its own name" "$ERR" \
        "^$p: .*'--no-such-option'.*"$'\n'"Try '$p --help'\\.\$"
    run "$BIN/$p" -Z
    expect_eq "$p -Z: exit 2" "$RC" 2
    expect_match "$p -Z: names the option" "$ERR" "^$p: .*'Z'"
done

# bad_value DESC OPTION VALUE ARGS...: exit 2, and one line that names the
# option and the value, then the hint; nothing on stdout.
bad_value() {
    local desc=$1 opt=$2 val=$3
    shift 3
    run "$@"
    expect_eq "$desc: exit 2" "$RC" 2
    expect_match "$desc: the message names $opt and '$val'" "$ERR" \
        "^[a-z_-]+: $opt: '$val' is not .+"$'\n'"Try '[a-z_-]+ --help'\\.\$"
    expect_eq "$desc: nothing on stdout" "$OUT" ""
}
bad_value "bench-echo --port 70000" --port 70000 "$BIN/bench-echo" --port 70000
bad_value "bench-echo --sched fast" --sched fast "$BIN/bench-echo" --sched fast

# bench-echo -j: the floor under --fsync everysec writes each read's bytes
# before its answers go, over a region zeroed first; only with -m threads.
run "$BIN/bench-echo" -j "$TEST_TMP/echo.j"
expect_eq "bench-echo -j without -m threads: exit 2" "$RC" 2
if srv_start "$TEST_TMP/echo.out" "$TEST_TMP/echo.err" 5 \
             "$BIN/bench-echo" -p 0 -m threads -j "$TEST_TMP/echo.j"; then
    exec {E}<>"/dev/tcp/127.0.0.1/$SRV_PORT"
    printf 'COUNT\nFIND f1 L2\n' >&$E
    IFS= read -r -t 5 -u $E LINE
    expect_eq "bench-echo -j: the request is in the file by its answer" \
        "$(head -c 6 "$TEST_TMP/echo.j" | od -An -c | tr -s ' ')" \
        " C O U N T \n"
    expect_eq "bench-echo -j: the file is the zeroed region, not grown" \
        "$(stat -c %s "$TEST_TMP/echo.j")" $((16 << 20))
    exec {E}>&-
    srv_stop "$SRV_PID"
else
    not_ok "bench-echo -m threads -j starts ($SRV_LINE)"
fi

# bench-echo -j -S: the floor under --fsync always, group commit with a
# thread per connection: every answer comes, in order on its connection,
# from whichever thread synced; -S needs -j.
run "$BIN/bench-echo" -m threads -S
expect_eq "bench-echo -S without -j: exit 2" "$RC" 2
if srv_start "$TEST_TMP/echo.out" "$TEST_TMP/echo.err" 5 \
             "$BIN/bench-echo" -p 0 -m threads -j "$TEST_TMP/echo.j" -S; then
    timeout 60 "$BIN/ssn-bench" -p "$SRV_PORT" -c 20 -t 2 -P 4 -n 4000 --mix 1:0:0 \
        --new-keys --keys 1000000 >"$TEST_TMP/echo.bench" 2>&1
    expect_match "bench-echo -j -S: 4,000 ADDs on 20 connections, 4 in flight, all answered OK" \
        "$(grep '^replies:' "$TEST_TMP/echo.bench")" '^replies: +stored 4000, .*error 0$'
    srv_stop "$SRV_PID"
else
    not_ok "bench-echo -m threads -j -S starts ($SRV_LINE)"
fi

# bench-echo -u: the epoll floor with a poll's reads and sends batched
# through io_uring, as --io events' are; the same answers, from a ring it
# holds (when the kernel gives one); only with -m epoll.
run "$BIN/bench-echo" -u -m threads
expect_eq "bench-echo -u with -m threads: exit 2" "$RC" 2
if srv_start "$TEST_TMP/echo.out" "$TEST_TMP/echo.err" 5 \
             "$BIN/bench-echo" -p 0 -u; then
    exec {E}<>"/dev/tcp/127.0.0.1/$SRV_PORT" {F}<>"/dev/tcp/127.0.0.1/$SRV_PORT"
    printf 'FIND f1 L2\nADD a b 1 123-45-6789\n' >&$E
    printf 'DELETE c d\n' >&$F
    IFS= read -r -t 5 -u $E L1; IFS= read -r -t 5 -u $E L2
    IFS= read -r -t 5 -u $F L3
    expect_eq "bench-echo -u: each line answered on its connection" \
        "$L1|$L2|$L3" "$(printf '%-30s -- %11s %4d' 'L2, f1' 123-45-6789 30)|OK|OK"
    if grep -qs 'no io_uring' "$TEST_TMP/echo.err"; then
        ok "# SKIP bench-echo -u holds a ring: this kernel gives none"
    else
        check "bench-echo -u holds an io_uring" bash -c \
            "ls -l /proc/$SRV_PID/fd | grep -q 'io_uring'"
    fi
    exec {E}>&- {F}>&-
    srv_stop "$SRV_PID"
else
    not_ok "bench-echo -u starts ($SRV_LINE)"
fi

# bench-echo -m threads is the floor of ssnserver's thread model only if
# its threads are scheduled as ssnserver's are: SCHED_BATCH by default.
for s in batch normal; do
    if srv_start "$TEST_TMP/echo.out" "$TEST_TMP/echo.err" 5 \
                 "$BIN/bench-echo" -p 0 -m threads -s "$s"; then
        exec {E}<>"/dev/tcp/127.0.0.1/$SRV_PORT"
        printf 'COUNT\n' >&$E
        IFS= read -r -t 5 -u $E LINE
        pol=$(policy_counts "$SRV_PID")
        want='^ [0-9]+ 0,$'
        [[ $s == batch ]] && want='^ [0-9]+ 0, 1 3,$'
        expect_match "bench-echo -m threads -s $s: the connection's thread policy ($pol)" \
            "$pol" "$want"
        exec {E}>&-
        srv_stop "$SRV_PID"
    else
        not_ok "bench-echo -m threads -s $s starts ($SRV_LINE)"
    fi
done

# README's HELP listing is the server's own.
readme_help=$(sed -n '/^    HELP$/,/^    END$/{s/^    //;p}' README.md | tail -n +2)
expect_eq "README's HELP listing is what HELP answers" "$readme_help" \
    "$(printf 'HELP\n' | "$BIN/ssnserver-buffered" --stdin -q 2>/dev/null)"

# make help names every target a person can type: each .PHONY one.
targets=$(sed -n 's/^\.PHONY: *//p' Makefile */*.mk tests/fuzz/fuzz.mk |
          tr -s ' \\' '\n\n' | sort -u | grep -v '^$')
help=$(make -s help 2>&1)
missing=$(for t in $targets; do
              grep -qE "(^| |, )$t( |,|$)" <<<"$help" || echo "$t"
          done | tr '\n' ' ')
expect_eq "make help names every .PHONY target" "$missing" ""

# A negative operand is a bad value, not an unknown option (cli_getopt):
# the message names it; an option's negative value is the option's.
for args in "kill_it 127.0.0.1 1 10 -2" "inclient 127.0.0.1 1 -5 1" \
            "inputgen 5 -1"; do
    p=${args%% *}
    run "$BIN/$p" ${args#* }
    neg=$(grep -o -- ' -[0-9]' <<<"$args" | tr -d ' ')
    expect_eq "$args: exit 2" "$RC" 2
    expect_match "$args: names '$neg' as a bad operand" "$ERR" \
        "^$p: '$neg' is not a valid operand: .+"$'\n'"Try '$p --help'\\.\$"
done
bad_value "kill_it --rate -5" --rate -5 "$BIN/kill_it" --rate -5 127.0.0.1 1 10 2
bad_value "kill_it --slow past NCLIENTS" --slow 5 "$BIN/kill_it" --slow 5 127.0.0.1 1 10 2

bad_value "inputgen --shard 7/3" --shard 7/3 "$BIN/inputgen" --shard 7/3 10 1
bad_value "inputgen NEVENTS 10x" NEVENTS 10x "$BIN/inputgen" 10x 1
bad_value "inclient --rate abc" --rate abc "$BIN/inclient" --rate abc 127.0.0.1 1 10 1
bad_value "inclient --timeout=-1" --timeout -1 "$BIN/inclient" --timeout=-1 127.0.0.1 1 10 1
bad_value "inclient PORT 99999" PORT 99999 "$BIN/inclient" 127.0.0.1 99999 10 1
bad_value "kill_it --preload abc" --preload abc "$BIN/kill_it" --preload abc 127.0.0.1 1 10 1
bad_value "kill_it NCLIENTS 0" NCLIENTS 0 "$BIN/kill_it" 127.0.0.1 1 10 0
bad_value "ssn-cli -p 99999" --port 99999 "$BIN/ssn-cli" -p 99999 COUNT
bad_value "ssn-cli --latency --count 0" --count 0 "$BIN/ssn-cli" --latency --count 0
bad_value "ssn-cli -r 0 (the --repeat short form)" --repeat 0 "$BIN/ssn-cli" -r 0 COUNT
bad_value "bench-hash --count abc" --count abc "$BIN/bench-hash" --count abc
bad_value "bench-hash -n abc (short form)" --count abc "$BIN/bench-hash" -n abc
bad_value "bench-hash --repeat 5000" --repeat 5000 "$BIN/bench-hash" --repeat 5000
bad_value "bench-log --lines 0" --lines 0 "$BIN/bench-log" --lines 0
bad_value "bench-log --bufsize 12" --bufsize 12 "$BIN/bench-log" --bufsize 12
bad_value "bench-wakeup --threads abc" --threads abc "$BIN/bench-wakeup" --threads abc
bad_value "bench-wakeup -w nope (the --variants short form)" --variants nope \
    "$BIN/bench-wakeup" -w nope
bad_value "ssnserver --batch abc" --batch abc "$BIN/ssnserver-fine" --batch abc
bad_value "ssnserver --lock-order random" --lock-order random "$BIN/ssnserver-fine" --lock-order random
for v in 0 2000; do
    run "$BIN/ssnserver-fine" --batch $v
    expect_match "ssnserver --batch $v: exit 2, the range named" "$RC:$ERR" \
        "^2:ssnserver-fine: --batch: '$v' is out of range \\(1 to 1024\\)"
done
run "$BIN/bench-hash" extra
expect_eq "bench-hash with an operand: exit 2" "$RC" 2
expect_match "bench-hash with an operand: names it" "$ERR" "^bench-hash: .*'extra'"
run "$BIN/inputgen" 10 1 "$TEST_TMP/no-such-list"
expect_eq "inputgen with a missing last-name list: exit 1 (run time)" "$RC" 1

# ---- make install, make uninstall -----------------------------------------

# A make of its own: not the jobserver or the variables of the make that
# may be running this script.
stage=$TEST_TMP/stage
submake() {
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BIN \
        make --no-print-directory -s "$@" DESTDIR="$stage" PREFIX=/usr
}
if submake install >"$TEST_TMP/install.log" 2>&1; then
    ok "make install DESTDIR=... PREFIX=/usr"
else
    not_ok "make install DESTDIR=... PREFIX=/usr"
    sed 's/^/#   /' "$TEST_TMP/install.log" | tail -n 5
fi
ib=$stage/usr/bin mp=$stage/usr/share/man
for p in "${PROGS[@]}"; do
    [[ $p == bench-echo ]] && continue  # tools/bench-compare's, not installed
    run "$ib/$p" --version
    expect_eq "installed $p --version" "$RC:$OUT" "0:$p $VERSION ($SUITE)"
done
n=0
for m in serial nolock coarse fine buffered; do
    n=$((n + 1))
    run "$ib/ssnserver-$m" --version
    expect_match "installed ssnserver-$m --version" "$RC:$OUT" \
        "^0:ssnserver [0-9].* $m "
    expect_eq "installed ssnserver$n is a link to ssnserver-$m" \
        "$(readlink "$ib/ssnserver$n")" "ssnserver-$m"
done
expect_eq "installed ssnserver is a link to ssnserver-buffered" \
    "$(readlink "$ib/ssnserver")" ssnserver-buffered
run "$ib/ssnserver" -V
expect_match "installed ssnserver runs the buffered build" "$RC:$OUT" \
    "^0:.*lock mode buffered "
for page in ssnserver inputgen inclient kill_it ssn-cli ssnserver-fine; do
    f=$mp/man1/$page.1
    MANWIDTH=80 MANPAGER=cat PAGER=cat man -l "$f" >"$TEST_TMP/page" \
        2>"$TEST_TMP/page.err"
    rc=$?
    if [[ $rc -eq 0 && ! -s $TEST_TMP/page.err ]] &&
       grep -q '^NAME' "$TEST_TMP/page"; then
        ok "man -l renders the installed $page(1)"
    else
        not_ok "man -l renders the installed $page(1) (rc $rc)"
        sed 's/^/#   /' "$TEST_TMP/page.err" | head -n 3
    fi
done

if submake uninstall >"$TEST_TMP/uninstall.log" 2>&1; then
    ok "make uninstall DESTDIR=... PREFIX=/usr"
else
    not_ok "make uninstall DESTDIR=... PREFIX=/usr"
    sed 's/^/#   /' "$TEST_TMP/uninstall.log" | tail -n 5
fi
left=$(find "$stage" ! -type d 2>/dev/null)
expect_eq "make uninstall leaves no file behind" "$left" ""

finish
