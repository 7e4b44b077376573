#!/bin/bash
# test-metrics.sh -- the latency figures over real TCP. STATS gives p50,
# p90, p99, p99.9 and max for the store lock's wait and hold, each
# command's latency and the journal's rounds, in order (p50 <= p90 <= p99
# <= p999 <= max), after a load of ssn-bench and one of each command, with
# either driver; STATS RESET zeroes them.
# --metrics-port: "metrics on ADDR:PORT" after "listening on"; /metrics
# scraped with bash's /dev/tcp twice while ssn-bench runs is the
# Prometheus text format (every sample "name{labels} value", a HELP and a
# TYPE line for each family first, counters that grew, summaries in
# order), passes promtool check metrics when promtool is installed, and
# holds no name or SSN; other paths get 404; a bad port value is named;
# protected mode refuses it beyond loopback without a password.
# With --password-file, /metrics answers 401 and a Basic challenge without
# the password or with a wrong one, 200 with it by Basic (any user) or
# Bearer, and logs the refusals at most about once a second, counting the
# rest. A wrong password there is a wrong AUTH (case_metrics_guesses):
# counted, its 401 held back on a timer while other scrapes are answered,
# and charged to its address on both ports; no credentials at all is no
# guess.
# SANITIZED=1 (BIN=bin/tsan): the same, the upper bounds on time looser.
# run-all: beside
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/journal.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/limits.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/metrics.sh"

SANITIZED=${SANITIZED:-0}
FAST_MS=$(( SANITIZED ? 1000 : 200 ))   # "at once": well below 250 ms

SB=$BIN/ssn-bench
[[ -x $SB ]] || SB=bin/ssn-bench       # BIN=bin/tsan has servers only
J=$TEST_TMP/people.journal

# in_order STATS_TEXT PREFIX SUFFIX: 0 when PREFIX_p50SUFFIX <= _p90 <=
# _p99 <= _p999 <= _max, all present; else says what it found.
in_order() {
    local got
    got=$(awk -v p="$2" -v s="$3" '
        BEGIN { n = split("p50 p90 p99 p999 max", k, " ") }
        { v[$1] = $2 }
        END {
            for (i = 1; i <= n; i++) {
                f = p "_" k[i] s
                if (!(f in v)) { print "no " f; exit 1 }
                if (i > 1 && v[f] + 0 < last + 0) {
                    print f " " v[f] " < " last; exit 1
                }
                last = v[f]
            }
        }' <<<"$1") && return 0
    echo "#   $got"
    return 1
}

# field STATS_TEXT NAME
field() {
    awk -v k="$2" '$1 == k { print $2 }' <<<"$1"
}

case_stats_percentiles() {
    local io=$1 s f
    rm -f "$J"
    start_server buffered --io "$io" --journal "$J" --fsync always || return
    "$SB" -p "$SRV_PORT" -c 8 -P 8 -n 20000 --mix add=1,find=8,delete=1 \
        >/dev/null 2>&1
    ask "$SRV_PORT" 'PRINT\nTREE 2\nDIGEST\nCHECK\nCOUNT\nSTATS\n' >/dev/null
    s=$(ask "$SRV_PORT" 'STATS\n')
    for f in lock_wait:_us lock_hold:_us cmd_add:_us cmd_delete:_us \
             cmd_find:_us cmd_print:_us cmd_count:_us cmd_check:_us \
             cmd_digest:_us cmd_stats:_us cmd_tree:_us \
             journal_round_records: journal_round:_us; do
        check "--io $io: STATS ${f%:*} p50 <= p90 <= p99 <= p999 <= max" \
            in_order "$s" "${f%:*}" "${f#*:}"
    done
    expect_match "--io $io: the load's FINDs are counted" \
        "$(field "$s" cmd_find_count)" '^[0-9]{4,}$'
    expect_eq "--io $io: one TREE, one PRINT" \
        "$(field "$s" cmd_tree_count) $(field "$s" cmd_print_count)" "1 1"
    expect_match "--io $io: rounds wrote records" \
        "$(field "$s" journal_rounds) $(field "$s" journal_round_records_max)" \
        '^[1-9][0-9]* [1-9][0-9]*$'
    expect_match "--io $io: a hold's max is at least a microsecond" \
        "$(field "$s" lock_hold_max_us)" '^[1-9][0-9]*$'
    s=$(ask "$SRV_PORT" 'STATS RESET\nFIND No Body\nSTATS\n')
    expect_eq "--io $io: STATS RESET zeroes them (the FIND after it counts)" \
        "$(field "$s" cmd_find_count) $(field "$s" cmd_add_count) $(field "$s" cmd_add_max_us) $(field "$s" journal_rounds) $(field "$s" journal_round_max_us)" \
        "1 0 0 0 0"
    stop_server "$SRV_PID"
}

# ---- /metrics --------------------------------------------------------------

# http_raw PORT TEXT OUT: TEXT (printf-ed) sent on one connection, then
# the server's whole answer, until it closes, into OUT.
http_raw() {
    timeout 5 bash -c '
        exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 97
        printf "$2" >&3
        cat <&3 >"$3"' _ "$1" "$2" "$3" 2>/dev/null
}

# exposition_ok FILE: every line a HELP, a TYPE or a sample
# "name{labels} value"; each sample's family announced by HELP and TYPE
# before it (a summary's _sum and _count belong to it). Says what is wrong.
exposition_ok() {
    local bad
    bad=$(body "$1" | awk '
        /^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* ./ { help[$3] = 1; next }
        /^# TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|summary|histogram|untyped)$/ {
            if (!($3 in help)) { print "TYPE before HELP: " $0; exit 1 }
            type[$3] = $4; next
        }
        /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="[^"]*"(,[a-zA-Z_][a-zA-Z0-9_]*="[^"]*")*\})? -?[0-9][0-9.e+-]*$/ {
            name = $1; sub(/\{.*/, "", name)
            fam = name
            if (!(fam in type)) { sub(/_(sum|count)$/, "", fam) }
            if (!(fam in type)) { print "no TYPE for " name; exit 1 }
            n++; next
        }
        { print "not a line of the format: " $0; exit 1 }
        END { if (!n) { print "no samples"; exit 1 } }')
    [[ -z $bad ]] && return 0
    echo "#   $bad"
    return 1
}

# counters_grew A B: no counter went down from scrape A to B, and
# ssn_commands_total went up.
counters_grew() {
    local bad
    bad=$(awk '
        FNR == 1 { f++ }
        /^# TYPE .* counter$/ { c[$3] = 1 }
        /^[a-z]/ && ($1 in c) { if (f == 1) a[$1] = $2; else b[$1] = $2 }
        END {
            for (k in a) if (b[k] + 0 < a[k] + 0) print k " went down"
            if (b["ssn_commands_total"] + 0 <= a["ssn_commands_total"] + 0)
                print "ssn_commands_total did not grow"
        }' <(body "$1") <(body "$2"))
    [[ -z $bad ]] && return 0
    echo "#   $bad"
    return 1
}

# quantiles_in_order FILE NAME LABELS: NAME{LABELS,quantile=...} in order
# and at most NAME_max{LABELS}.
quantiles_in_order() {
    local b=$1 n=$2 l=$3 last=0 v q
    for q in 0.5 0.9 0.99 0.999; do
        v=$(sample "$b" "$n{${l:+$l,}quantile=\"$q\"}")
        [[ -n $v ]] && awk -v a="$last" -v b="$v" 'BEGIN { exit !(a <= b) }' || {
            echo "#   $n $l quantile $q: '$v' after $last"; return 1; }
        last=$v
    done
    v=$(sample "$b" "${n}_max${l:+{$l\}}")
    awk -v a="$last" -v b="$v" 'BEGIN { exit !(b != "" && a <= b) }' || {
        echo "#   $n $l: max '$v' below p99.9 $last"; return 1; }
}

case_metrics_port() {
    local mport a=$TEST_TMP/scrape1 b=$TEST_TMP/scrape2 bench
    start_server buffered --io events --metrics-port 0 || return
    mport=$(metrics_port)
    expect_match "'metrics on 127.0.0.1:PORT' is the line after 'listening on'" \
        "$(sed -n 2p "$SRV_OUT")" '^metrics on 127\.0\.0\.1:[0-9]+$'
    [[ -n $mport ]] || { stop_server "$SRV_PID"; return; }
    ask "$SRV_PORT" 'ADD Zed Quux 44 987-65-4321\n' >/dev/null

    "$SB" -p "$SRV_PORT" -c 8 -P 8 --duration 3 --keys 1000 >/dev/null 2>&1 &
    bench=$!
    sleep 0.7
    scrape "$mport" /metrics "$a"
    sleep 1
    scrape "$mport" /metrics "$b"
    wait "$bench"

    expect_match "GET /metrics: 200, the exposition's content type" \
        "$(head -n 3 "$a" | tr -d '\r')" \
        $'^HTTP/1\\.[01] 200 OK\nContent-Type: text/plain; version=0\\.0\\.4'
    check "every line is HELP, TYPE or 'name{labels} value', each family typed" \
        exposition_ok "$a"
    check "the counters grew between two scrapes under load" counters_grew "$a" "$b"
    check "ssn_lock_wait_seconds quantiles in order, max last" \
        quantiles_in_order "$b" ssn_lock_wait_seconds ""
    check "ssn_lock_hold_seconds quantiles in order, max last" \
        quantiles_in_order "$b" ssn_lock_hold_seconds ""
    check "FIND's ssn_request_duration_seconds in order, max last" \
        quantiles_in_order "$b" ssn_request_duration_seconds 'command="find"'
    expect_match "ssn_info names the build and the settings as labels" \
        "$(body "$b" | grep '^ssn_info{')" \
        '^ssn_info\{version="[^"]+",mode="buffered",io="events",lock_order="bounded",sched="normal"\} 1$'
    local calls enters
    calls=$(sample "$b" ssn_uring_calls_total)
    enters=$(sample "$b" ssn_uring_enters_total)
    check "ssn_uring_calls_total ($calls) at least ssn_uring_enters_total ($enters)" \
        test -n "$calls" -a -n "$enters" -a "${calls:-0}" -ge "${enters:-1}"
    expect_match "FIND's latency counted" \
        "$(sample "$b" 'ssn_request_duration_seconds_count{command="find"}')" \
        '^[1-9][0-9]*$'
    check "no name and no SSN in /metrics" \
        bash -c "! grep -Eq 'Zed|Quux|[0-9]{3}-[0-9]{2}-[0-9]{4}' '$a' '$b'"
    if command -v promtool >/dev/null; then
        check "promtool check metrics accepts it" \
            bash -c "sed '1,/^\r\{0,1\}\$/d' '$b' | promtool check metrics"
    else
        ok "# SKIP promtool check metrics: promtool is not installed"
    fi
    scrape "$mport" /other "$a"
    expect_match "another path: 404" "$(head -n 1 "$a")" '^HTTP/1\.[01] 404 '
    scrape "$mport" /metrics/x "$a"
    expect_match "/metrics/x: 404" "$(head -n 1 "$a")" '^HTTP/1\.[01] 404 '
    http_raw "$mport" 'HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n' "$a"
    expect_match "HEAD /metrics: 200, its length, no body" \
        "$(status "$a") $(grep -ic '^Content-Length: [1-9]' "$a") $(body "$a" | wc -c)" \
        '^HTTP/1\.1 200 OK 1 0$'
    http_raw "$mport" 'POST /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\nab' "$a"
    expect_match "POST: 405, saying what is allowed" \
        "$(status "$a") $(grep -i '^Allow:' "$a" | tr -d '\r')" \
        '^HTTP/1\.1 405 Method Not Allowed Allow: GET, HEAD$'
    http_raw "$mport" "GET /metrics HTTP/1.0\r\nX: $(printf '%9000s' x)\r\n\r\n" "$a"
    expect_match "a 9,000-byte header: 431" "$(status "$a")" '^HTTP/1\.1 431 '
    http_raw "$mport" 'GET /metrics HTTP/2.0\r\n\r\n' "$a"
    expect_match "HTTP/2.0: 505" "$(status "$a")" '^HTTP/1\.1 505 '
    http_raw "$mport" 'GET /metrics\r\n\r\n' "$a"
    expect_match "no version: 400" "$(status "$a")" '^HTTP/1\.1 400 '
    http_raw "$mport" 'GET /metrics HTTP/1.1\r\nAuthorization: Bearer a\rb\r\n\r\n' "$a"
    expect_match "a bare CR in a header: 400 (RFC 9112)" "$(status "$a")" '^HTTP/1\.1 400 '
    stop_server "$SRV_PID"
    expect_eq "the server stops cleanly with the metrics thread" "$STOP_RC" 0
}

# A scrape never waits for the store lock: coarse holds it for as long as
# a session lives, and /metrics still answers at once, lock figures and all.
case_metrics_coarse_held() {
    local mport t0 ms
    start_server coarse --metrics-port 0 || return
    mport=$(metrics_port)
    open_conn "$SRV_PORT"
    send_line "$CONN" "COUNT"
    read_line "$CONN" 2            # the session has begun: the lock is held
    t0=$(now)
    scrape "$mport" /metrics "$TEST_TMP/held"
    ms=$(elapsed_ms "$t0")
    check "coarse, a session holding the lock: /metrics answers within 1 s ($ms ms)" \
        test "$ms" -lt 1000
    expect_match "... with the lock's figures" \
        "$(sample "$TEST_TMP/held" ssn_lock_acquisitions_total)" '^[1-9][0-9]*$'
    expect_match "... and ssn_info's labels: coarse, its I/O model's sched" \
        "$(body "$TEST_TMP/held" | grep '^ssn_info{')" \
        'mode="coarse",(io="threads",lock_order="bounded",sched="batch"|io="events",lock_order="bounded",sched="normal")\} 1$'
    close_conn "$CONN"
    stop_server "$SRV_PID"
}

# Connections to the metrics port are bounded: with an open-file limit
# sized for -m 50, 200 idle ones take 16 descriptors (the 17th on is
# closed at once) and the main port goes on answering; one that trickles
# a byte a second is closed at its deadline, 10 s after its accept.
# Before the bound (libevent's evhttp), they took every descriptor, the
# main port left clients waiting for seconds, and evhttp's accept, failing
# with EMFILE, spun and logged millions of lines.
case_metrics_exhaust() {
    local mport f=$TEST_TMP/exhaust i fd fds=() held=0 shut=0 n=0 t0 ms trickle
    start_server buffered -m 50 --metrics-port 0 || return
    mport=$(metrics_port)
    if ! prlimit --pid "$SRV_PID" --nofile=100:100 2>/dev/null; then
        ok "# SKIP the metrics port's bound: prlimit cannot lower the limit"
        stop_server "$SRV_PID"
        return
    fi
    for ((i = 0; i < 200; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$mport" || break
        fds+=("$fd")
    done
    check "200 connections to the metrics port made (${#fds[@]})" \
        test "${#fds[@]}" -eq 200
    # All of them accepted (none left in the listening socket's queue),
    # so that the trickler is the newest.
    for ((i = 0; i < 50; i++)); do
        [[ $(ss -Hltn "sport = :$mport" 2>/dev/null | awk '{ print $2 }') == 0 ]] && break
        sleep 0.1
    done
    sleep 0.1
    # The trickler: a head never ended, a byte a second; "closed" once the
    # server has closed it. The newest, it takes the oldest idle one's place.
    t0=$(now)
    timeout 20 bash -c '
        trap "" PIPE
        exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 97
        printf "GET /metrics HTTP/1.0\r\n" >&3
        for ((i = 0; i < 15; i++)); do
            printf "X" >&3 2>/dev/null
            IFS= read -r -t 1 -u 3 line
            [[ $? -eq 1 ]] && { echo closed; exit 0; }
        done' _ "$mport" >"$f.trickle" 2>/dev/null &
    trickle=$!
    sleep 0.3
    for ((i = 0; i < 10; i++)); do
        converse_str "$SRV_PORT" 'COUNT\nQUIT\n' "$f.client" 2
        [[ $(head -n 1 "$f.client") == 0 ]] && n=$((n + 1))
    done
    check "meanwhile the main port answers 10 clients of 10 within 2 s each ($n)" \
        test "$n" -eq 10
    # 15 idle ones and the trickler hold every place: a scrape still gets
    # in, in the place of the oldest idle one.
    scrape "$mport" /metrics "$f"
    expect_match "a scrape is served while 16 idle connections are open, the places taken and refusals counted" \
        "$(status "$f") $(sample "$f" ssn_metrics_connections_evicted_total) $(sample "$f" ssn_metrics_connections_refused_total)" \
        '^HTTP/1\.1 200 OK 186 0$'
    for fd in "${fds[@]}"; do
        IFS= read -r -t 0.05 -u "$fd" _
        case $? in 1) shut=$((shut + 1)) ;; *) held=$((held + 1)) ;; esac
    done
    check "the server kept the newest 14 of them, closed the 186 older ($held kept, $shut closed)" \
        test "$held" -eq 14 -a "$shut" -eq 186
    wait "$trickle"
    ms=$(elapsed_ms "$t0")
    check "the trickling connection is closed at its deadline, 10 s ($ms ms)" \
        bash -c "grep -qx closed '$f.trickle' && test $ms -ge 9000 -a $ms -le 12500"
    for fd in "${fds[@]}"; do
        close_conn "$fd"
    done
    stop_server "$SRV_PID"
    n=$(wc -l <"$SRV_ERR")
    check "the server's log stays short: one line a second per address ($n lines)" \
        test "$n" -le 30
}

# 16 clients that asked, were answered and keep their connections open:
# each is done, and a scrape takes the oldest one's place.
case_metrics_done_evicted() {
    local mport f=$TEST_TMP/done i fd fds=() shut=0 first="" line n=0
    start_server buffered --metrics-port 0 || return
    mport=$(metrics_port)
    for ((i = 0; i < 16; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$mport" || break
        printf 'GET /metrics HTTP/1.0\r\n\r\n' >&"$fd"
        fds+=("$fd")
    done
    # Each answered (its status line read), its connection left open.
    for fd in "${fds[@]}"; do
        IFS= read -r -t 5 -u "$fd" line && [[ ${line%$'\r'} == "HTTP/1.1 200 OK" ]] &&
            n=$((n + 1))
        [[ -z $first ]] && first=${line%$'\r'}
    done
    check "16 scrapes answered, their connections left open ($n)" test "$n" -eq 16
    scrape "$mport" /metrics "$f"
    expect_match "16 answered connections left open: a scrape is served in the oldest one's place" \
        "$(status "$f") $(sample "$f" ssn_metrics_connections_evicted_total) $(sample "$f" ssn_metrics_connections_refused_total)" \
        '^HTTP/1\.1 200 OK 1 0$'
    # The oldest was closed: the rest of its answer (its headers, and a
    # body of Content-Length bytes), then the end.
    timeout 2 cat <&"${fds[0]}" >"$f.first" 2>/dev/null && shut=1
    local len head
    len=$(grep -m1 -i '^content-length:' "$f.first" | tr -dc 0-9)
    head=$(sed -n '1,/^\r$/p' "$f.first" | wc -c)
    check "the oldest got its whole answer ($(( $(wc -c <"$f.first") - head )) of ${len:-?} bytes of body), then its close" \
        test "$shut" -eq 1 -a -n "$len" -a "$(( $(wc -c <"$f.first") - head ))" -eq "${len:-0}"
    for fd in "${fds[@]}"; do
        close_conn "$fd"
    done
    stop_server "$SRV_PID"
}

case_metrics_port_errors() {
    local err
    for v in abc -1 65536 ""; do
        err=$("$BIN/ssnserver-buffered" -p 0 --metrics-port "$v" 2>&1 </dev/null)
        expect_match "--metrics-port '$v': refused, the option and value named" \
            "$?:$err" "^2:ssnserver-buffered: --metrics-port: '$v' "
    done
    # The metrics port binds the --bind address under the main port's
    # protected mode: beyond loopback, no password, no --unprotected: no
    # port at all (the server binds nothing, so nothing is exposed).
    err=$(timeout 5 "$BIN/ssnserver-buffered" -p 0 -b 0.0.0.0 --metrics-port 0 \
          2>&1 </dev/null)
    expect_match "-b 0.0.0.0 --metrics-port without a password: refused" \
        "$?:$err" "^1:.*refusing to listen on 0\.0\.0\.0.*--password-file"
    # Its 16 connections are counted in the open-file limit at start-up:
    # under a limit of 100, 52 places are left with it (68 without), an
    # eighth of them for connections lingering after QUIT: -m 90 is
    # lowered to 46 (60 without).
    err=$(bash -c 'ulimit -n 100 && exec timeout 1 "$0" -p 0 --metrics-port 0 -m 90' \
          "$BIN/ssnserver-buffered" 2>&1 </dev/null)
    expect_match "an open-file limit of 100 with --metrics-port: -m 90 lowered to 46" \
        "$err" '--max-clients lowered from 90 to 46: the open-file limit is 100'
}

# status FILE: the answer's status line, without its \r.
status() {
    head -n 1 "$1" | tr -d '\r'
}

case_metrics_password() {
    local mport pw=$TEST_TMP/pw f=$TEST_TMP/auth i basic n t0 ms
    printf 'Open-Sesame42\n' >"$pw"
    chmod 600 "$pw"
    start_server buffered --metrics-port 0 --password-file "$pw" || return
    mport=$(metrics_port)
    [[ -n $mport ]] || { not_ok "a metrics port"; stop_server "$SRV_PID"; return; }

    t0=$(now)
    scrape "$mport" /metrics "$f"
    expect_match "with a password: no credentials, 401" "$(status "$f")" \
        '^HTTP/1\.[01] 401 Unauthorized$'
    expect_match "... with a Basic challenge" \
        "$(grep -i '^WWW-Authenticate:' "$f" | tr -d '\r')" \
        '^WWW-Authenticate: Basic realm="ssnserver"$'
    check "... and no figures" bash -c "! grep -q '^ssn_' '$f'"
    basic=$(printf 'prometheus:Open-Sesame42' | base64)
    scrape "$mport" /metrics "$f" "Authorization: Basic $basic"
    expect_match "Basic with the password (any user): 200" "$(status "$f")" \
        '^HTTP/1\.[01] 200 OK$'
    check "... the exposition" exposition_ok "$f"
    if command -v promtool >/dev/null; then
        check "... which promtool check metrics accepts" \
            bash -c "sed '1,/^\r\{0,1\}\$/d' '$f' | promtool check metrics"
    else
        ok "# SKIP promtool check metrics: promtool is not installed"
    fi
    scrape "$mport" /metrics "$f" "Authorization: Bearer Open-Sesame42"
    expect_match "Bearer with the password: 200" "$(status "$f")" \
        '^HTTP/1\.[01] 200 OK$'
    check "... the exposition" exposition_ok "$f"
    scrape "$mport" /metrics "$f" \
        "Authorization: Basic $(printf 'prometheus:Open-Sesame4' | base64)"
    expect_match "Basic with a wrong password: 401" "$(status "$f")" \
        '^HTTP/1\.[01] 401 '
    scrape "$mport" /metrics "$f" "Authorization: Bearer Open-Sesame42x"
    expect_match "Bearer with a wrong password: 401" "$(status "$f")" \
        '^HTTP/1\.[01] 401 '
    scrape "$mport" /metrics "$f" \
        "Authorization: Basic $(printf 'Open-Sesame42' | base64)"
    expect_match "Basic with no user part (no colon): 401" "$(status "$f")" \
        '^HTTP/1\.[01] 401 '
    scrape "$mport" /metrics "$f" "Authorization: Open-Sesame42"
    expect_match "the password with no scheme: 401" "$(status "$f")" \
        '^HTTP/1\.[01] 401 '
    for ((i = 0; i < 20; i++)); do
        scrape "$mport" /metrics "$f"
    done
    sleep 1.2
    scrape "$mport" /metrics "$f"
    ms=$(elapsed_ms "$t0")
    stop_server "$SRV_PID"
    n=$(grep -c '/metrics: refused' "$SRV_ERR")
    check "25 refusals in $ms ms: a log line a second at most ($n)" \
        test "$n" -ge 2 -a $((n - 1)) -le $((ms / 1000))
    # On a loaded machine the 20 scrapes may span seconds, so the line
    # after a suppressed run need not be the last one.
    expect_match "... a later line counts the ones held back" \
        "$(grep '/metrics: refused' "$SRV_ERR" | tail -n +2 | grep 'held back' | tail -n 1)" \
        'refused .* from 127\.0\.0\.1:[0-9]+ \(and [1-9][0-9]* such lines from 127\.0\.0\.1 held back\)$'
    check "... and never shows the password" \
        bash -c "! grep -q 'Open-Sesame' '$SRV_ERR'"
}

# guesses_from PORT MPORT PASSWORD: python3 (it binds the source
# address) prints three lines:
#   held STATUS_B MS_B PENDING STATUS_A MS_A FAILURES: a wrong Bearer from
#     127.0.0.1 (A), then the password from 127.0.0.2 (B) while A waits:
#     B's status and time, whether A was still unanswered when B had its
#     whole answer, A's status and time, B's ssn_auth_failures_total;
#   auth N: how many of 7 wrong AUTHs on the main port from 127.0.0.3,
#     one a connection, were refused;
#   after STATUS MS: the password on /metrics from 127.0.0.3 then;
#   crowd STATUS EVICTED: 16 wrong Bearers from 127.0.0.4, all held, then
#     the password from 127.0.0.2: its status, and its
#     ssn_metrics_connections_evicted_total.
guesses_from() {
    timeout 30 python3 -c '
import socket, sys, time
port, mport, pw = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]

def connect(src, p):
    s = socket.socket()
    s.bind((src, 0))
    s.settimeout(10)
    s.connect(("127.0.0.1", p))
    return s

def scrape(src, cred):
    s = connect(src, mport)
    s.sendall(("GET /metrics HTTP/1.0\r\nAuthorization: Bearer %s\r\n\r\n"
               % cred).encode())
    return s

def whole(s):
    got = b""
    while True:
        d = s.recv(65536)
        if not d:
            return got.decode(errors="replace")
        got += d

def line(s):
    got = b""
    while not got.endswith(b"\n"):
        d = s.recv(1)
        if not d:
            break
        got += d
    return got.decode(errors="replace")

def ms(t0):
    return int((time.monotonic() - t0) * 1000)

t0 = time.monotonic()
a = scrape("127.0.0.1", "wrong-guess")
time.sleep(0.05)                        # A is read first
t1 = time.monotonic()
b = whole(scrape("127.0.0.2", pw))
b_ms = ms(t1)
a.setblocking(False)
try:
    a.recv(1, socket.MSG_PEEK)
    pending = "answered"
except BlockingIOError:
    pending = "pending"
a.setblocking(True)
a_text = whole(a)
a.close()
fails = [l.split()[1] for l in b.splitlines()
         if l.startswith("ssn_auth_failures_total ")]
print("held", b.split("\r\n")[0].replace(" ", "_"), b_ms, pending,
      a_text.split("\r\n")[0].replace(" ", "_"), ms(t0), fails[0] if fails else "-")
conns = [connect("127.0.0.3", port) for _ in range(7)]
for c in conns:
    c.sendall(b"AUTH wrong\n")
print("auth", sum(line(c).startswith("Error: invalid password")
                  for c in conns))
t2 = time.monotonic()
after = whole(scrape("127.0.0.3", pw))
print("after", after.split("\r\n")[0].replace(" ", "_"), ms(t2))
crowd = [scrape("127.0.0.4", "crowd%d" % i) for i in range(16)]
time.sleep(0.05)
c = whole(scrape("127.0.0.2", pw))
ev = [l.split()[1] for l in c.splitlines()
      if l.startswith("ssn_metrics_connections_evicted_total ")]
print("crowd", c.split("\r\n")[0].replace(" ", "_"), ev[0] if ev else "-")
' "$@" 2>&1
}

# A wrong password on /metrics is a wrong AUTH from its address: before,
# one client made 9,000 guesses a second there, none counted, none slowed.
# Now each is counted (STATS auth_failures, ssn_auth_failures_total), its
# 401 waits at least 250 ms (so 8 in turn take 2 s), and it is charged to
# the address as AUTH's are: past 6, the right password waits too, on
# /metrics and on the main port, and 6 wrong AUTHs on the main port make
# /metrics wait. The wait is a timer: the password from another address is
# answered at once meanwhile. No Authorization header is no guess: 401 at
# once, not counted (docs/LIMITS.md, "wrong passwords on /metrics").
case_metrics_guesses() {
    local mport pw=$TEST_TMP/pw f=$TEST_TMP/guess i ctl n0 t0 bad=0 out
    if ! command -v python3 >/dev/null; then
        not_ok "/metrics guesses: python3 (to connect from 127.0.0.2)"
        return
    fi
    printf 'Open-Sesame42\n' >"$pw"
    chmod 600 "$pw"
    start_server buffered --metrics-port 0 --password-file "$pw" || return
    mport=$(metrics_port)
    open_conn "$SRV_PORT"; ctl=$CONN
    send_line "$ctl" "AUTH Open-Sesame42"
    read_line "$ctl" 5
    stats_fd "$ctl" auth_failures; n0=$STAT

    mark t0
    for ((i = 0; i < 8; i++)); do
        scrape "$mport" /metrics "$f" "Authorization: Bearer guess$i"
        [[ $(status "$f") == "HTTP/1.1 401 Unauthorized" ]] || bad=$((bad + 1))
    done
    ms_since "$t0"
    expect_eq "8 wrong Bearer passwords on fresh connections: 401 each" "$bad" 0
    check "... each held back 250 ms at least: 8 took $MS ms (>= 1900)" \
        test "$MS" -ge 1900
    stats_fd "$ctl" auth_failures
    expect_eq "... each a wrong AUTH: STATS auth_failures grew by 8" \
        "$(( ${STAT:-0} - ${n0:-0} ))" 8

    mark t0
    for ((i = 0; i < 4; i++)); do
        scrape "$mport" /metrics "$f"
    done
    ms_since "$t0"
    check "no Authorization header: 401, at once, though the address is penalised (4 in $MS ms < 1000)" \
        test "$(status "$f")" = "HTTP/1.1 401 Unauthorized" -a "$MS" -lt 1000
    stats_fd "$ctl" auth_failures
    expect_eq "... and no guess: auth_failures unchanged" \
        "$(( ${STAT:-0} - ${n0:-0} ))" 8

    mark t0
    scrape "$mport" /metrics "$f" "Authorization: Bearer Open-Sesame42"
    ms_since "$t0"
    check "past 6 failures, the password from that address waits too: 200 after $MS ms (>= 240)" \
        test "$(status "$f")" = "HTTP/1.1 200 OK" -a "$MS" -ge 240
    open_conn "$SRV_PORT"
    mark t0
    send_line "$CONN" "AUTH Open-Sesame42"
    read_line "$CONN" 5
    ms_since "$t0"
    check "... and so does its AUTH on the main port: $LINE after $MS ms (>= 240)" \
        test "$LINE" = OK -a "$MS" -ge 240
    close_conn "$CONN"

    out=$(guesses_from "$SRV_PORT" "$mport" Open-Sesame42)
    local held=($(grep '^held ' <<<"$out")) auth after crowd
    auth=$(sed -n 's/^auth //p' <<<"$out")
    after=($(grep '^after ' <<<"$out"))
    crowd=($(grep '^crowd ' <<<"$out"))
    [[ ${#held[@]} -eq 7 && ${#after[@]} -eq 3 && ${#crowd[@]} -eq 3 ]] ||
        echo "#   python3: $(head -c 300 <<<"$out")"
    check "the password from 127.0.0.2 while a guess waits: 200 in ${held[2]:-?} ms (< $FAST_MS), the guess unanswered then" \
        test "${held[1]:-}" = HTTP/1.1_200_OK -a "${held[2]:-9999}" -lt "$FAST_MS" \
             -a "${held[3]:-}" = pending
    check "... the guess's 401 came after its wait (${held[5]:-?} ms >= 240)" \
        test "${held[4]:-}" = HTTP/1.1_401_Unauthorized -a "${held[5]:-0}" -ge 240
    check "... ssn_auth_failures_total counts the guesses (${held[6]:-?} >= $(( ${n0:-0} + 8 )))" \
        test "${held[6]:-0}" -ge $(( ${n0:-0} + 8 ))
    expect_eq "7 wrong AUTHs on the main port from 127.0.0.3, one a connection" \
        "${auth:-}" 7
    check "... then the password on /metrics from 127.0.0.3 waits: ${after[1]:-?} after ${after[2]:-?} ms (>= 240)" \
        test "${after[1]:-}" = HTTP/1.1_200_OK -a "${after[2]:-0}" -ge 240
    expect_eq "16 guesses held from 127.0.0.4 keep no scrape out: one takes the oldest's place (status, evicted)" \
        "${crowd[1]:-} ${crowd[2]:-}" "HTTP/1.1_200_OK 1"
    close_conn "$ctl"
    stop_server "$SRV_PID"
    expect_eq "the server stops cleanly" "$STOP_RC" 0
}

case_stats_percentiles threads
case_stats_percentiles events
case_metrics_port
case_metrics_coarse_held
case_metrics_exhaust
case_metrics_done_evicted
case_metrics_port_errors
case_metrics_password
case_metrics_guesses
finish
