#!/bin/bash
# test-metrics.sh -- the latency figures over real TCP. STATS gives p50,
# p90, p99, p99.9 and max for the store lock's wait and hold, each
# command's latency and the journal's rounds, in order (p50 <= p90 <= p99
# <= p999 <= max), after a load of ssn-bench and one of each command, with
# either driver; STATS RESET zeroes them.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/journal.sh"

SB=$BIN/ssn-bench
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

case_stats_percentiles threads
case_stats_percentiles events
finish
