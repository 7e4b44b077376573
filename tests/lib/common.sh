# tests/lib/common.sh -- helpers shared by the integration scripts
# (tests/test-server-*.sh, tests/test-clients.sh). Sourced, never run. Plain
# bash: the TCP side uses bash's /dev/tcp and coreutils' timeout, so nothing
# beyond a fresh Debian install is needed (no nc, no python).
#
#   ok/not_ok/check/expect_*    one "ok - ..." or "not ok - ..." line each
#   start_server MODE [ARGS]    $BIN/ssnserver-MODE -p 0; sets SRV_PID, SRV_PORT
#   start_seams_server MODE [ARGS]  the same from $SEAMS_BIN, the test build
#                               whose journal has the SSN_TEST_* seams
#   stop_server PID [SIG]       signal, wait (bounded); sets STOP_RC
#   srv_running/srv_signal/srv_wait_gone   from tests/lib/server.sh
#   converse PORT REQ OUT       one connection: send file REQ, save replies
#   open_conn/send_line/read_line/close_conn   a connection in this shell
#   model_*                     the expected store, kept in bash
#   finish                      the count line; exits 0 only if all passed
#
# Servers are started and stopped by tests/lib/server.sh: only servers
# started here are ever signalled, by PID, and its EXIT trap stops any still
# running, then removes the scratch directory.

set -u
export LC_ALL=C                 # bytewise sort, printf widths in bytes

cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
source tests/lib/server.sh      # sets BIN (default bin) and the traps
# The load clients: make tsan and make asan build only the servers, so a
# suite run with BIN=bin/tsan drives them with the plain build's.
CLIENTS_BIN=${CLIENTS_BIN:-$BIN}
[[ -x $CLIENTS_BIN/ssn-bench ]] || CLIENTS_BIN=bin

TESTS_PASSED=0
TESTS_FAILED=0
SERVERS_STARTED=0               # names each server's .out and .err files
TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ssntest.XXXXXX") || exit 1

HEAD_LINE=$(printf '_%.0s' {1..50})
TAIL_LINE=$(printf -- '-%.0s' {1..50})
SHA_EMPTY=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855

remove_test_tmp() {
    rm -rf "$TEST_TMP"
}
srv_on_exit remove_test_tmp

# ---- reporting ---------------------------------------------------------

ok() {
    TESTS_PASSED=$((TESTS_PASSED + 1))
    echo "ok - $*"
}

not_ok() {
    TESTS_FAILED=$((TESTS_FAILED + 1))
    echo "not ok - $*"
}

# check DESC CMD...: ok when CMD succeeds.
check() {
    local desc=$1
    shift
    if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

# expect_eq DESC GOT WANT
expect_eq() {
    if [[ "$2" == "$3" ]]; then
        ok "$1"
    else
        not_ok "$1"
        printf '#   got:  %q\n#   want: %q\n' "$2" "$3"
    fi
}

# expect_file DESC GOT_FILE WANT_FILE: byte-for-byte equal.
expect_file() {
    if cmp -s "$2" "$3"; then
        ok "$1"
    else
        not_ok "$1"
        diff <(cat -A "$3") <(cat -A "$2") 2>&1 | head -n 12 | sed 's/^/#   /'
    fi
}

# expect_match DESC STRING ERE
expect_match() {
    if [[ "$2" =~ $3 ]]; then
        ok "$1"
    else
        not_ok "$1"
        printf '#   %q does not match /%s/\n' "$2" "$3"
    fi
}

finish() {
    local f
    # Sanitizer builds (BIN=bin/asan, bin/tsan) report on stderr.
    for f in "$TEST_TMP"/server*.err; do
        [[ -e $f ]] || continue
        if grep -qE 'Sanitizer|runtime error:' "$f"; then
            not_ok "no sanitizer report in $(basename "$f" .err)'s stderr"
            grep -E -m 3 'Sanitizer|runtime error:|^    #[0-3] ' "$f" | sed 's/^/#   /'
        fi
    done
    echo "# $TESTS_PASSED passed, $TESTS_FAILED failed"
    [[ $TESTS_FAILED -eq 0 ]]
    exit $?
}

# Seconds since the epoch with microseconds, and a difference in ms.
now() { echo "${EPOCHREALTIME/[.,]/}"; }
elapsed_ms() { echo $(( ($(now) - $1) / 1000 )); }

# ---- servers -------------------------------------------------------------

# start_server MODE [ARGS...]: starts $BIN/ssnserver-MODE -p 0 ARGS, waits
# up to 5 s for "listening on 127.0.0.1:PORT" and sets SRV_PID, SRV_PORT,
# SRV_OUT and SRV_ERR. Returns 1 (with a not-ok line) when it never listens.
start_server() {
    local mode=$1 n=$SERVERS_STARTED
    shift
    SRV_OUT=$TEST_TMP/server$n.out
    SRV_ERR=$TEST_TMP/server$n.err
    SERVERS_STARTED=$((n + 1))
    # SSN_IO=events runs a suite against the event-driven driver.
    if srv_start "$SRV_OUT" "$SRV_ERR" 5 "$BIN/ssnserver-$mode" -p 0 \
                 ${SSN_IO:+--io "$SSN_IO"} "$@"; then
        [[ $SRV_ADDR == 127.0.0.1 ]] && return 0
        SRV_LINE="listening on $SRV_ADDR:$SRV_PORT"     # not loopback
        srv_stop "$SRV_PID"
    fi
    not_ok "$mode: server starts and prints its port (first line: '$SRV_LINE')"
    sed 's/^/#   stderr: /' "$SRV_ERR" | head -n 5
    return 1
}

# The test build of the servers (the Makefile's $(BUILD)/seams/): the
# journal's test seams (server/journal/journal_seams.h), armed by SSN_TEST_*
# variables, are compiled into it and into no server of bin/. Beside bin/
# it is build/seams/, beside bin/tsan/ build/tsan/seams/ (make tsan), and
# so on; SEAMS_BIN set by the caller wins.
if [[ -z ${SEAMS_BIN:-} ]]; then
    case $BIN in
    bin/*) SEAMS_BIN=build/${BIN#bin/}/seams ;;
    *)     SEAMS_BIN=${BUILD:-build}/seams ;;
    esac
fi

# start_seams_server MODE [ARGS...]: start_server with $SEAMS_BIN's
# ssnserver-MODE, for a case that arms a seam (SSN_TEST_COMPACT_CRASH,
# SSN_TEST_JOURNAL_FAIL in its environment).
start_seams_server() {
    if [[ ! -x $SEAMS_BIN/ssnserver-$1 ]]; then
        not_ok "$1: the test build $SEAMS_BIN/ssnserver-$1 exists (make seams-servers)"
        return 1
    fi
    BIN=$SEAMS_BIN start_server "$@"
}

# stop_server PID [SIGNAL]: sends SIGNAL (TERM), waits up to 3 s and reaps
# it. STOP_RC is its exit status, or "timeout" (it is then killed).
stop_server() {
    srv_stop "$1" "${2:-TERM}" 3
    STOP_RC=$SRV_RC
    [[ $SRV_HOW != killed ]] || STOP_RC=timeout
}

# thread_policies PID: the scheduling policy of every thread of PID, one a
# line: field 41 of /proc/PID/task/TID/stat (3 is SCHED_BATCH, 0 the
# kernel's default).
thread_policies() {
    local f line
    for f in /proc/"$1"/task/*/stat; do
        line=$(<"$f") || continue
        line=${line##*) }                   # fields from the third on
        set -- $line
        echo "${39}"
    done
}

# policy_counts PID: thread_policies counted, on one line: " 2 0, 1 3,"
# for two threads of the default policy and one SCHED_BATCH.
policy_counts() {
    thread_policies "$1" | sort | uniq -c | tr -s ' ' | tr '\n' ,
}

# ---- talking TCP -------------------------------------------------------

# converse PORT REQ_FILE OUT_FILE [TIMEOUT]: one connection that writes all
# of REQ_FILE (one write for anything cat can read at once) while a reader
# saves every reply byte until the server closes. Returns 0, or 124 when
# the server did not close within TIMEOUT (5) seconds.
converse() {
    timeout "${4:-5}" bash -c '
        exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 97
        cat <&3 >"$3" &
        cat "$2" >&3 2>/dev/null
        wait $!' _ "$1" "$2" "$3" 2>/dev/null
}

# converse_str PORT TEXT OUT_FILE [TIMEOUT]: converse with printf-ed TEXT
# (escapes such as \n and \t are expanded).
converse_str() {
    local req
    req=$(mktemp "$TEST_TMP/req.XXXXXX")
    printf "$2" >"$req"
    converse "$1" "$req" "$3" "${4:-5}"
}

# open_conn PORT: a connection in this shell; sets CONN (the fd).
open_conn() {
    exec {CONN}<>"/dev/tcp/127.0.0.1/$1"
}

send_line() {
    printf '%s\n' "$2" >&"$1"
}

# read_line FD TIMEOUT: one reply line into LINE; 1 on time-out or EOF.
read_line() {
    LINE=""
    IFS= read -r -t "$2" -u "$1" LINE
}

close_conn() {
    eval "exec $1>&-" 2>/dev/null
}

# ---- the expected store ------------------------------------------------

declare -A MODEL=()             # "last first" -> "age ssn"

model_reset() { MODEL=(); }

# model_add FIRST LAST AGE SSN: 1 when the name is already there.
model_add() {
    [[ -z ${MODEL["$2 $1"]+x} ]] || return 1
    MODEL["$2 $1"]="$((10#$3)) $4"
}

model_delete() {
    [[ -n ${MODEL["$2 $1"]+x} ]] || return 1
    unset 'MODEL["$2 $1"]'
}

model_count() { echo "${#MODEL[@]}"; }

# The canonical dump: "last first age ssn\n" in tree order. Names hold no
# byte <= ' ', so sorting whole lines bytewise orders by last, then first.
model_dump() {
    local k
    for k in "${!MODEL[@]}"; do
        printf '%s %s\n' "$k" "${MODEL[$k]}"
    done | sort
}

model_digest() {
    local d
    d=$(model_dump | sha256sum)
    echo "${d%% *}"
}

# entry_line NAME SSN AGE: PRINT's line, "%-30s -- %11s %4d" with NAME
# padded to 30 UTF-8 characters (common/entry.c): printf pads bytes here
# (LC_ALL=C), so it is given the continuation bytes on top.
entry_line() {
    local name=$1 ascii
    ascii=${name//[$'\x80'-$'\xbf']/}
    printf '%-*s -- %11s %4d\n' $((30 + ${#name} - ${#ascii})) "$name" "$2" "$3"
}

# PRINT's whole reply.
model_print() {
    local last first age ssn
    echo "$HEAD_LINE"
    model_dump | while read -r last first age ssn; do
        entry_line "$last, $first" "$ssn" "$age"
    done
    echo "$TAIL_LINE"
}

# FIND's reply line for one entry.
print_line() {     # FIRST LAST AGE SSN
    entry_line "$2, $1" "$4" "$((10#$3))"
}
