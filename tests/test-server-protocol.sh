#!/bin/bash
# test-server-protocol.sh -- the single-client contract of the line protocol,
# over real TCP, for each of the five lock modes: every command's exact
# reply bytes, case-insensitive commands, tabs, "\r\n", blank lines, every
# error reply, pipelining 1,000 requests in one write, and over-long lines.
# Expected replies come from a model of the store kept in bash
# (tests/lib/common.sh), checked against literal lines where it matters.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

MODES=(serial nolock coarse fine buffered)

BAD_FIRST="Error: bad first name: 1 to 63 bytes, no spaces or control characters"
BAD_LAST="Error: bad last name: 1 to 63 bytes, no spaces or control characters"
BAD_AGE="Error: bad age: a whole number from 0 to 150"
BAD_SSN="Error: bad SSN: must be DDD-DD-DDDD"

# ---- building a conversation: requests and the exact expected replies --

# begin NAME: a new conversation; files $REQ, $EXP and $OUT.
begin() {
    REQ=$TEST_TMP/$MODE-$1.req
    EXP=$TEST_TMP/$MODE-$1.exp
    OUT=$TEST_TMP/$MODE-$1.out
    : >"$REQ"
    : >"$EXP"
}

req() { printf '%s\n' "$1" >>"$REQ"; }          # one request line (LF)
raw() { printf '%s' "$1" >>"$REQ"; }            # request bytes as given
want() { printf '%s\n' "$1" >>"$EXP"; }         # one expected reply line
want_raw() { printf '%s' "$1" >>"$EXP"; }

# Requests whose replies follow from the model.
r_add() {                       # FIRST LAST AGE SSN
    req "ADD $1 $2 $3 $4"
    if model_add "$@"; then want "OK"; else want "Error: $1 $2 already exists"; fi
}
r_delete() {
    req "DELETE $1 $2"
    if model_delete "$1" "$2"; then want "OK"; else want "Error: $1 $2 not found"; fi
}
r_find() {
    local v
    req "FIND $1 $2"
    v=${MODEL["$2 $1"]-}
    if [[ -n $v ]]; then print_line "$1" "$2" $v >>"$EXP"
    else want "Error: $1 $2 not found"; fi
}
r_count() { req "${1:-COUNT}"; model_count >>"$EXP"; }
r_print() { req "${1:-PRINT}"; model_print >>"$EXP"; }
r_digest() { req "${1:-DIGEST}"; model_digest >>"$EXP"; }
r_done() { req "${1:-DONE}"; want "Bye"; }

NCONN=0                         # connections made to the current server

# talk: sends $REQ on a new connection, replies into $OUT.
talk() {
    NCONN=$((NCONN + 1))
    converse "$SRV_PORT" "$REQ" "$OUT" 5
}

# run DESC: talk, and the replies must be $EXP exactly, the connection
# closed by the server.
run() {
    if ! talk; then
        not_ok "$MODE: $1 (no close from the server within 5 s)"
        return
    fi
    expect_file "$MODE: $1" "$OUT" "$EXP"
}

# ---- the cases ---------------------------------------------------------

case_empty_store() {
    begin empty
    r_count
    req "PRINT"; want "$HEAD_LINE"; want "$TAIL_LINE"
    req "DIGEST"; want "$SHA_EMPTY"
    r_find No One
    r_delete No One
    r_done
    run "empty store: COUNT 0, bare PRINT frame, DIGEST of nothing, misses"
}

case_basic() {
    begin basic
    r_add John Doe 42 123-45-6789
    r_add John Doe 43 111-11-1111                   # duplicate
    r_add Ann Smith 0 000-00-0000
    r_add bob Doe 150 999-99-9999
    r_add Zed Adams 007 555-55-5555
    r_add $'Zo\xc3\xab' $'M\xc3\xbcller' 31 314-15-9265
    r_find John Doe
    r_find Zed Adams
    r_find No Body
    r_delete Ann Smith
    r_delete Ann Smith                              # now missing
    r_find Ann Smith
    r_add Ann Smith 1 222-22-2222
    r_count
    r_print
    r_digest
    r_done QUIT
    run "ADD, duplicate, DELETE, missing, FIND, COUNT, PRINT, DIGEST, QUIT"

    # The model itself, against literal bytes.
    begin literal
    req "FIND John Doe"
    want "Doe, John                      -- 123-45-6789   42"
    req "FIND Zed Adams"
    want "Adams, Zed                     -- 555-55-5555    7"
    req "ADD John Doe 43 111-11-1111"
    want "Error: John Doe already exists"
    req "DELETE No Body"
    want "Error: No Body not found"
    r_done
    run "FIND lines and error texts, literally"
    expect_eq "$MODE: dump order is last then first, bytewise" \
        "$(model_dump | cut -d' ' -f1,2 | tr '\n' '|')" \
        "Adams Zed|Doe John|Doe bob|M"$'\xc3\xbc'"ller Zo"$'\xc3\xab'"|Smith Ann|"
    expect_eq "$MODE: canonical dump is 'last first age ssn'" \
        "$(model_dump | head -n 1)" "Adams Zed 7 555-55-5555"
}

case_check() {
    begin check
    req "CHECK"
    r_done
    talk
    expect_match "$MODE: CHECK starts with OK" "$(head -n 1 "$OUT")" '^OK( |$)'
}

case_stats() {
    local line key val bad=0
    local -A st=()

    begin stats
    req "STATS"
    r_done
    talk
    while IFS= read -r line; do
        [[ $line == END || $line == Bye ]] && continue
        if [[ $line =~ ^([a-z][a-z0-9_]*)\ (.*)$ ]]; then
            st[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
        else
            bad=1
        fi
    done <"$OUT"
    expect_eq "$MODE: STATS ends with END (then Bye)" \
        "$(tail -n 2 "$OUT" | tr '\n' ' ')" "END Bye "
    check "$MODE: STATS lines are 'key value'" test "$bad" -eq 0
    for key in mode uptime_seconds connections_current connections_total \
               commands_total entries; do
        check "$MODE: STATS has $key" test -n "${st[$key]+x}"
    done
    expect_eq "$MODE: STATS mode" "${st[mode]-}" "$MODE"
    expect_eq "$MODE: STATS entries" "${st[entries]-}" "$(model_count)"
    expect_eq "$MODE: STATS connections_current" "${st[connections_current]-}" 1
    expect_eq "$MODE: STATS connections_total" "${st[connections_total]-}" "$NCONN"
    expect_match "$MODE: STATS uptime_seconds is a number" \
        "${st[uptime_seconds]-}" '^[0-9]+$'

    # commands_total: STATS and DONE above, then COUNT, COUNT, a bad
    # command and no blank line: 5 more by the next STATS.
    local before=${st[commands_total]-0}
    begin stats2
    printf 'COUNT\n\nCOUNT\n   \nNOPE\nSTATS\nDONE\n' >"$REQ"
    talk
    val=$(sed -n 's/^commands_total //p' "$OUT")
    expect_eq "$MODE: STATS commands_total counts commands, not blank lines" \
        "$((val - before))" 5
}

# stat_now KEY: KEY's value in a STATS from a connection of its own.
stat_now() {
    NCONN=$((NCONN + 1))
    converse_str "$SRV_PORT" 'STATS\nDONE\n' "$TEST_TMP/stat.out"
    sed -n "s/^$1 //p" "$TEST_TMP/stat.out"
}

# A session borrows its buffers for each request and gives them back when
# it waits for the next: from its pool, not malloc (docs/ARCHITECTURE.md).
# 200 requests one at a time take at most the first request's two.
case_buffers_reused() {
    local fd i n=0 before after
    before=$(stat_now session_buffers_malloced)
    NCONN=$((NCONN + 1))
    open_conn "$SRV_PORT"; fd=$CONN
    for ((i = 0; i < 200; i++)); do
        send_line "$fd" COUNT
        read_line "$fd" 2 && [[ $LINE == "$(model_count)" ]] && n=$((n + 1))
    done
    close_conn "$fd"
    after=$(stat_now session_buffers_malloced)
    expect_eq "$MODE: 200 COUNTs one at a time answered" "$n" 200
    check "$MODE: ... with at most 2 buffers from malloc (STATS session_buffers_malloced went from $before to $after)" \
        test "$((after - before))" -le 2
    NCONN=$((NCONN + 1))
    converse_str "$SRV_PORT" 'STATS RESET\nSTATS\nDONE\n' "$TEST_TMP/stat.out"
    expect_eq "$MODE: STATS RESET zeroes session_buffers_malloced" \
        "$(sed -n 's/^session_buffers_malloced //p' "$TEST_TMP/stat.out")" 0
}

case_help() {
    begin help
    req "HELP"
    r_done
    talk
    expect_eq "$MODE: HELP ends with END" "$(tail -n 2 "$OUT" | tr '\n' ' ')" \
        "END Bye "
    expect_match "$MODE: HELP lists the commands" "$(head -n 1 "$OUT")" '^ADD '
}

case_quit_closes() {
    local w
    for w in DONE QUIT 'done' quit; do
        begin quit
        printf '%s\nCOUNT\nCOUNT\n' "$w" >"$REQ"
        want "Bye"
        run "$w answers Bye, closes, ignores what follows"
    done
}

case_any_case() {
    begin anycase
    r_add Case Test 5 123-45-6789
    req "add Case Two 6 123-45-6789"; model_add Case Two 6 123-45-6789; want OK
    r_count count
    req "fInD Case Test"; print_line Case Test 5 123-45-6789 >>"$EXP"
    r_print Print
    r_digest dIgEsT
    req "dElEtE Case Two"; model_delete Case Two; want OK
    req "find Case Two"; want "Error: Case Two not found"
    r_done Done
    run "commands in any case"
}

case_tabs() {
    begin tabs
    raw $'\tADD\tTab\tPerson\t33\t321-54-9876\t\n'
    model_add Tab Person 33 321-54-9876; want OK
    raw $'FIND \t Tab\t\tPerson  \n'; print_line Tab Person 33 321-54-9876 >>"$EXP"
    raw $' \tCOUNT\t\n'; model_count >>"$EXP"
    raw $'DELETE\tTab\tPerson\n'; model_delete Tab Person; want OK
    raw $'\tDONE\n'; want Bye
    run "tabs and spaces separate words"
}

case_crlf() {
    begin crlf
    raw $'ADD Cr Lf 9 987-65-4321\r\n'; model_add Cr Lf 9 987-65-4321; want OK
    raw $'FIND Cr Lf\r\n'; print_line Cr Lf 9 987-65-4321 >>"$EXP"
    raw $'COUNT\r\n'; model_count >>"$EXP"
    raw $'PRINT\r\n'; model_print >>"$EXP"
    raw $'DIGEST\r\n'; model_digest >>"$EXP"
    raw $'NOPE\r\n'; want "Error: Bad command: NOPE"
    raw $'DELETE Cr Lf\r\n'; model_delete Cr Lf; want OK
    raw $'DONE\r\n'; want Bye
    run "\\r\\n line endings (replies end in \\n only)"
}

case_blank() {
    begin blank
    raw $'\n\n   \n\t\n\r\n \t \r\n'
    r_count
    raw $'\n\n'
    r_done
    run "blank lines get no reply"
}

case_errors() {
    local long64 bigword
    long64=$(printf 'x%.0s' {1..64})
    bigword=$(printf 'Z%.0s' {1..40})

    begin errors
    req "FOO";                          want "Error: Bad command: FOO"
    req "foo bar";                      want "Error: Bad command: foo"
    raw $'B\x01\x1bD 1\n';               want "Error: Bad command: B??D"
    raw $'\x7f\n';                      want "Error: Bad command: ?"
    printf 'CO\0UNT\n' >>"$REQ";        want "Error: Bad command: CO?UNT"
    req "$bigword";                     want "Error: Bad command: ${bigword:0:32}..."
    req "ADD";                          want "Error: usage: ADD first last age ssn"
    req "ADD a b 1";                    want "Error: usage: ADD first last age ssn"
    req "ADD a b 1 123-45-6789 x";      want "Error: usage: ADD first last age ssn"
    req "DELETE a";                     want "Error: usage: DELETE first last"
    req "FIND a b c";                   want "Error: usage: FIND first last"
    req "PRINT all";                    want "Error: usage: PRINT"
    req "COUNT 1";                      want "Error: usage: COUNT"
    req "CHECK x";                      want "Error: usage: CHECK"
    req "DIGEST x";                     want "Error: usage: DIGEST"
    req "STATS x";                      want "Error: usage: STATS [RESET]"
    req "HELP x";                       want "Error: usage: HELP"
    req "DONE x";                       want "Error: usage: DONE"
    req "QUIT x";                       want "Error: usage: QUIT"
    req "ADD John Doe 151 123-45-6789"; want "$BAD_AGE"
    req "ADD John Doe -1 123-45-6789";  want "$BAD_AGE"
    req "ADD John Doe 1e2 123-45-6789"; want "$BAD_AGE"
    req "ADD John Doe 42 123456789";    want "$BAD_SSN"
    req "ADD John Doe 42 123-45-678";   want "$BAD_SSN"
    raw $'ADD J\x01 Doe 42 123-45-6789\n'; want "$BAD_FIRST"
    raw $'ADD John D\x7f 42 123-45-6789\n'; want "$BAD_LAST"
    req "ADD $long64 Doe 1 123-45-6789"; want "$BAD_FIRST"
    req "FIND John $long64";            want "$BAD_LAST"
    r_delete No Body
    r_find No Body
    r_add John Doe 77 777-77-7777                   # duplicate
    local nerr
    nerr=$(wc -l <"$EXP")
    r_count
    r_digest
    r_done
    run "every error reply, exactly"
    expect_eq "$MODE: each error line starts with 'Error: '" \
        "$(head -n "$nerr" "$OUT" | grep -c '^Error: ')" "$nerr"
}

case_invalid_add_changes_nothing() {
    begin badadd
    req "ADD New Person 42 12-345-6789"; want "$BAD_SSN"
    req "ADD New Person 200 123-45-6789"; want "$BAD_AGE"
    req "ADD New Person 42"; want "Error: usage: ADD first last age ssn"
    r_find New Person
    r_count
    r_print
    r_digest
    r_done
    run "an invalid ADD changes nothing"
}

case_long_names() {
    local f l
    f=$(printf 'F%.0s' {1..63})
    l=$(printf 'L%.0s' {1..63})
    begin longnames
    r_add "$f" "$l" 150 123-45-6789
    r_find "$f" "$l"
    r_print
    r_delete "$f" "$l"
    r_done
    run "63-byte names: ADD, FIND, PRINT (never cut), DELETE"
}

case_pipelining() {
    local i n
    begin pipeline
    for ((i = 1; i <= 500; i++)); do
        r_add "p$i" Pipe $((i % 151)) 123-45-6789
        r_find "p$i" Pipe
    done
    r_done
    n=$(wc -l <"$REQ")
    check "$MODE: pipelined request fits one write (< 128 KiB)" \
        test "$(wc -c <"$REQ")" -lt 131072
    run "1,000 pipelined requests in one write get 1,000 replies in order"
    expect_eq "$MODE: pipelined reply count" "$(wc -l <"$OUT")" "$n"
}

case_long_lines() {
    local pad1024 pad1025 x2000
    x2000=$(printf 'x%.0s' {1..1995})
    # "ADD Pad Ded 1 123-45-6789" is 25 bytes; blanks make it 1024 or 1025.
    pad1024="ADD Pad Ded 1 123-45-6789$(printf ' %.0s' {1..999})"
    pad1025="ADD Pad Dee 1 123-45-6789$(printf ' %.0s' {1..1000})"

    begin toolong
    req "FIND $x2000"; want "Error: line too long"
    r_count
    r_find John Doe
    req "$pad1024"; model_add Pad Ded 1 123-45-6789; want OK
    req "$pad1025"; want "Error: line too long"
    raw "$pad1024"$'\r\n'; want "Error: Pad Ded already exists"
    r_find Pad Dee
    r_delete Pad Ded
    r_done
    run "2,000-byte line: 'Error: line too long', connection still works; 1024 ok, 1025 not"
}

# An over-long line that arrives in two reads, on a connection of our own.
case_long_line_split() {
    local a b got=""
    a=$(printf 'y%.0s' {1..1500})
    b=$(printf 'y%.0s' {1..600})
    NCONN=$((NCONN + 1))
    if ! open_conn "$SRV_PORT"; then
        not_ok "$MODE: connect for the split long line"
        return
    fi
    printf '%s' "$a" >&"$CONN"
    sleep 0.1
    printf '%s\nCOUNT\n' "$b" >&"$CONN"
    read_line "$CONN" 3 && got=$LINE
    read_line "$CONN" 3 && got="$got|$LINE"
    send_line "$CONN" DONE
    read_line "$CONN" 3 && got="$got|$LINE"
    close_conn "$CONN"
    expect_eq "$MODE: long line over two reads: one error, then served" \
        "$got" "Error: line too long|$(model_count)|Bye"
}

for MODE in "${MODES[@]}"; do
    t0=$(now)
    model_reset
    NCONN=0
    start_server "$MODE" || continue
    case_empty_store
    case_basic
    case_check
    case_stats
    case_help
    case_quit_closes
    case_any_case
    case_tabs
    case_crlf
    case_blank
    case_errors
    case_invalid_add_changes_nothing
    case_long_names
    case_pipelining
    case_long_lines
    case_long_line_split
    case_buffers_reused
    case_check
    check "$MODE: server still running" srv_running "$SRV_PID"
    stop_server "$SRV_PID" TERM
    expect_eq "$MODE: SIGTERM exit status" "$STOP_RC" 0
    echo "# $MODE: $(elapsed_ms "$t0") ms"
done

finish
