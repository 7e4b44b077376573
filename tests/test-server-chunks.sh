#!/bin/bash
# test-server-chunks.sh -- one conversation, cut where a session's state
# is most fragile, gets the same reply bytes as the same conversation sent
# whole. With --io events an idle connection's session goes back to its
# worker's pool between reads (server/session_park.c), and only between
# lines and telnet commands; the cuts fall inside a request, between CR
# and LF, inside telnet commands and a subnegotiation, after a stray IAC
# (0xFF then a newline: both data), and inside a line
# over the 16 KiB limit, each followed by a pause so that the worker sees
# the connection idle there; then, without the long line, at offsets drawn
# at random (CHUNK_SEEDS). The reference is a thread per connection
# (which keeps its session) with the whole conversation in one write, on
# a fresh server as each run is. The replies must be the same bytes, and
# so must the telnet answers (IAC WONT, IAC DONT), in order; only where
# the answers fall among the replies depends on how the bytes were read.
# Both drivers are checked (CHUNK_IO chooses).
# run-all: beside
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

LONG=$(head -c 20000 /dev/zero | tr '\0' x)
# The conversation, in the pieces it is sent in (printf formats; %s is
# LONG's part).
PIECES=(
    'ADD Ann' ' Lee 30 123-45-6789\r' '\n'
    '\377' '\375' '\030FIND Ann Lee\n'
    '\377\372\030' '\001\377' '\360COUNT\n'
    'ADD Bob Ray 41 987-65-4321\n'
    'FIND Bob\377' '\nCOUNT\n'
    "%s" "%s" "%s\\n"
    'FIND Bob' ' Ray\n\377\364' '\377\375\006'
    'DELETE Ann Lee\r\nCOUNT\nFIND Ann Lee\nQUIT\n'
)
# LONG cut at 5,000 (a partial line) and 17,000 bytes (past the limit:
# the rest is being dropped).
LONG_PARTS=("${LONG:0:5000}" "${LONG:5000:12000}" "${LONG:17000}")

# write_pieces DIR: each piece to DIR/NN, and all of them to DIR/whole;
# the conversation without the long line to DIR/short.
write_pieces() {
    local i k=0 f
    mkdir -p "$1"
    : >"$1/whole"
    : >"$1/short"
    for ((i = 0; i < ${#PIECES[@]}; i++)); do
        f=$(printf '%s/%02d' "$1" "$i")
        if [[ ${PIECES[$i]} == *%s* ]]; then
            printf "${PIECES[$i]}" "${LONG_PARTS[$k]}" >"$f"
            k=$((k + 1))
        else
            printf "${PIECES[$i]}" >"$f"
            cat "$f" >>"$1/short"
        fi
        cat "$f" >>"$1/whole"
    done
}

# cut_random FILE SEED DIR: FILE as DIR/whole, and in pieces DIR/NN, cut
# at 10 offsets drawn with SEED (one or two may coincide).
cut_random() {
    local len at prev=0 n=0 i
    local -a cuts=()
    len=$(stat -c %s "$1")
    RANDOM=$2
    for ((i = 0; i < 10; i++)); do
        cuts+=($((RANDOM % (len - 1) + 1)))
    done
    mapfile -t cuts < <(printf '%s\n' "${cuts[@]}" | sort -n -u)
    mkdir -p "$3"
    cp "$1" "$3/whole"
    for at in "${cuts[@]}" "$len"; do
        tail -c +$((prev + 1)) "$1" | head -c $((at - prev)) \
            >"$(printf '%s/%02d' "$3" "$n")"
        n=$((n + 1))
        prev=$at
    done
}

# converse_cut PORT DIR OUT: each piece of DIR written on its own, 50 ms
# apart; every reply byte into OUT until the server closes (QUIT).
converse_cut() {
    timeout 10 bash -c '
        exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 97
        cat <&3 >"$3" &
        for f in "$2"/[0-9][0-9]; do
            cat "$f" >&3
            sleep 0.05
        done
        wait $!' _ "$1" "$2" "$3" 2>/dev/null
}

P=$TEST_TMP/pieces
write_pieces "$P"

# run IO DIR HOW OUT: DIR's conversation on a fresh server (--io IO),
# sent whole or cut; OUT.replies gets the replies, OUT.telnet the answers.
run() {
    : >"$4"
    if SSN_IO=$1 start_server buffered; then
        if [[ $3 == whole ]]; then
            converse "$SRV_PORT" "$2/whole" "$4"
        else
            converse_cut "$SRV_PORT" "$2" "$4"
        fi
        stop_server "$SRV_PID"
    fi
    tr -d '\377\374\376\030\006' <"$4" >"$4.replies"
    tr -cd '\377\374\376\030\006' <"$4" >"$4.telnet"
}

# same DESC OUT [REF]: OUT's replies and answers are REF's (the reference).
same() {
    local ref=${3:-$TEST_TMP/ref}
    check "$1: the reference's replies" cmp -s "$ref.replies" "$2.replies"
    check "$1: the reference's telnet answers, in order" \
        cmp -s "$ref.telnet" "$2.telnet"
}

run threads "$P" whole "$TEST_TMP/ref"
expect_eq "the reference (a thread per connection, one write) has every reply" \
    "$(tr '\n' '|' <"$TEST_TMP/ref.replies" | sed 's/  */ /g')" \
    "OK|Lee, Ann -- 123-45-6789 30|1|OK|Error: usage: FIND first last|2|Error: line too long|Ray, Bob -- 987-65-4321 41|OK|1|Error: Ann Lee not found|Bye|"
expect_eq "the reference has both answers (IAC WONT TTYPE, IAC WONT TIMING-MARK)" \
    "$(od -An -tx1 <"$TEST_TMP/ref.telnet" | tr -s ' \n' ' ')" \
    " ff fc 18 ff fc 06 "

for io in ${CHUNK_IO:-events threads}; do
    run "$io" "$P" whole "$TEST_TMP/$io-whole"
    same "--io $io, the conversation in one write" "$TEST_TMP/$io-whole"
    run "$io" "$P" cut "$TEST_TMP/$io-cut"
    same "--io $io, cut in ${#PIECES[@]} pieces 50 ms apart" "$TEST_TMP/$io-cut"
done

# Without the long line, cut at random offsets: CHUNK_SEEDS chooses them.
cut_random "$P/short" 0 "$TEST_TMP/short"
run threads "$TEST_TMP/short" whole "$TEST_TMP/sref"
for seed in ${CHUNK_SEEDS:-1 2 3}; do
    cut_random "$P/short" "$seed" "$TEST_TMP/r$seed"
    check "seed $seed: the pieces make up the conversation" \
        cmp -s <(cat "$TEST_TMP/r$seed"/[0-9][0-9]) "$P/short"
    for io in ${CHUNK_IO:-events threads}; do
        run "$io" "$TEST_TMP/r$seed" cut "$TEST_TMP/r$seed-$io"
        same "--io $io, without the long line, cut at random (seed $seed)" \
            "$TEST_TMP/r$seed-$io" "$TEST_TMP/sref"
    done
done
finish
