#!/bin/bash
# test-tree.sh -- TREE [DEPTH] over real TCP (docs/PROTOCOL.md): in every
# mode, the reply is DOT that graphviz's dot renders without a word, then
# END; each drawn node is a person's "Last, First" (no SSN, no age) in the
# colour the insert order gives it; the depth bound holds and the "+ N
# more" boxes account for everyone else; the parser's errors for bad
# depths. A client that pipelines TREEs and never reads must not hold up
# anyone else: TREE's lines are made after the store is left. Then a
# nolock server with a wide race window is broken by clients adding at
# once, and TREE must name what CHECK names and mark a node that breaks it
# (skipped, not failed, if the race does not break the tree in time: it is
# a race).
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

MODES=(serial nolock coarse fine buffered)
BAD_DEPTH="Error: bad depth: a whole number from 1 to 10"
HAVE_DOT=1
command -v dot >/dev/null 2>&1 || HAVE_DOT=0

# tree PORT REQUEST OUT: one connection sending REQUEST (a TREE) and QUIT;
# OUT gets the reply up to END (the DOT and END), OUT.all everything.
tree() {
    converse_str "$1" "$2\nQUIT\n" "$3.all" 10 || return 1
    sed '/^END$/q' "$3.all" >"$3"
}

# dot_ok DESC FILE: FILE's DOT (END left out) renders to SVG with nothing
# on stderr.
dot_ok() {
    if [[ $HAVE_DOT == 0 ]]; then
        ok "$1 # SKIP graphviz's dot is not installed"
        return
    fi
    if sed '$d' "$2" | dot -Tsvg -o "$2.svg" 2>"$2.dot-err" &&
            [[ ! -s $2.dot-err ]] && grep -q '</svg>' "$2.svg"; then
        ok "$1"
    else
        not_ok "$1"
        sed 's/^/#   dot: /' "$2.dot-err" | head -n 5
    fi
}

# shape_ok FILE: the reply's frame: "digraph rbtree {" first, "}" then
# END last, and every line in between one statement ending in ';'.
shape_ok() {
    local n
    n=$(wc -l <"$1")
    [[ $(sed -n 1p "$1") == "digraph rbtree {" && $(sed -n "$((n - 1))p" "$1") == "}" &&
       $(sed -n "${n}p" "$1") == END ]] &&
        ! sed '1d; $d' "$1" | sed '$d' | grep -qv '^  .*;$'
}

# The nodes drawn, as "slot colour label" lines (n12 [label="L, F", ...]).
nodes_of() {      # slot, colour, "Last, First" (drawn on two lines)
    sed -n 's/^  n\([0-9]*\) \[label="\([^"]*\)", fillcolor=\([a-z]*\).*/\1 \3 \2/p' "$1" |
        sed 's/,\\n/, /'
}

# The sum of the "+ N more" boxes' N.
hidden_of() {
    sed -n 's/^  h[0-9]* \[label="+\([0-9]*\)\\nmore".*/\1/p' "$1" |
        awk '{ s += $1 } END { print s + 0 }'
}

# no_personal_data FILE: no SSN, and none of the ages below (21 to 27).
no_personal_data() {
    ! grep -qE '[0-9]{3}-[0-9]{2}-[0-9]{4}|\<2[1-7]\>' "$1"
}

# ---- every mode: a known tree ------------------------------------------

# Seven people added in name order: the insert fix-ups give this tree (the
# root in slot 1, slot i's children in 2i and 2i+1).
SEVEN="1 black Doe2, Ann2
2 black Doe1, Ann1
3 red Doe4, Ann4
6 black Doe3, Ann3
7 black Doe6, Ann6
14 red Doe5, Ann5
15 red Doe7, Ann7"

case_known_tree() {
    local out=$TEST_TMP/$MODE-tree i
    tree "$SRV_PORT" "TREE" "$out.empty"
    check "$MODE: TREE of an empty store is a frame with one nil leaf" shape_ok "$out.empty"
    expect_eq "$MODE: empty: the label and the nil" \
        "$(grep -c -e 'label="0 nodes, top 5 levels\\nall invariants hold"' \
                   -e '^  z1 \[label="nil"' "$out.empty")" 2

    for i in 1 2 3 4 5 6 7; do echo "ADD Ann$i Doe$i $((20 + i)) 123-45-000$i"; done >"$out.req"
    echo QUIT >>"$out.req"
    converse "$SRV_PORT" "$out.req" "$out.add" 5
    tree "$SRV_PORT" "tree" "$out"
    check "$MODE: TREE: digraph, one statement a line, END last" shape_ok "$out"
    dot_ok "$MODE: TREE renders with dot -Tsvg" "$out"
    expect_eq "$MODE: TREE: each node in its slot, its colour, 'Last, First'" \
        "$(nodes_of "$out" | sort -n)" "$SEVEN"
    expect_eq "$MODE: TREE: eight nil leaves, no box, nothing marked" \
        "$(grep -c '\[label="nil"' "$out") $(grep -c 'more"' "$out") $(grep -c orange "$out")" "8 0 0"
    check "$MODE: TREE shows no SSN and no age" no_personal_data "$out"

    tree "$SRV_PORT" "TREE 2" "$out.2"
    expect_eq "$MODE: TREE 2: three nodes, boxes for 1 and 3 more" \
        "$(nodes_of "$out.2" | wc -l) $(grep -o '^  h[67] \[label="+[0-9]\\nmore"' "$out.2" | paste -sd' ')" \
        '3   h6 [label="+1\nmore"   h7 [label="+3\nmore"'
    dot_ok "$MODE: TREE 2 renders" "$out.2"
}

case_bad_depths() {
    local out=$TEST_TMP/$MODE-bad
    converse_str "$SRV_PORT" 'TREE 0\nTREE 11\nTREE x\nTREE -1\nTREE 007\nTREE 1 2\nQUIT\n' "$out"
    expect_eq "$MODE: TREE 0, 11, x, -1, 007 and two depths are refused" "$(cat "$out")" \
"$BAD_DEPTH
$BAD_DEPTH
$BAD_DEPTH
$BAD_DEPTH
$BAD_DEPTH
Error: usage: TREE [DEPTH]
Bye"
}

for MODE in "${MODES[@]}"; do
    start_server "$MODE" || continue
    case_known_tree
    case_bad_depths
    stop_server "$SRV_PID"
    expect_eq "$MODE: server exits 0 on SIGTERM" "$STOP_RC" 0
done

# ---- a bigger store: the depth bound and the counts -----------------------

# 20,000 people: TREE's top levels are full, the boxes hold the rest, and
# it answers at once (the drawing is bounded by the depth; the counting and
# checking walks are O(n), a few milliseconds here).
case_big_store() {
    local out=$TEST_TMP/big n=20000 i t0 ms drawn full depth
    for ((i = 0; i < n; i++)); do
        printf 'ADD F%d L%05d 40 000-00-0000\n' "$i" $(( (i * 7919) % n ))
    done >"$out.req"
    echo QUIT >>"$out.req"
    converse "$SRV_PORT" "$out.req" "$out.add" 30
    for depth in 1 5 10; do
        t0=$(now)
        tree "$SRV_PORT" "TREE $depth" "$out.$depth"
        ms=$(elapsed_ms "$t0")
        drawn=$(nodes_of "$out.$depth" | wc -l)
        # The top 8 levels of any red-black tree this big are full (its
        # shortest path holds at least half its height in black nodes).
        full=$(( (1 << depth) - 1 ))
        [[ $depth -gt 8 && $drawn -le $full ]] && full=$drawn
        expect_eq "TREE $depth on $n people: $full nodes drawn, the boxes hold the rest" \
            "$drawn $(( drawn + $(hidden_of "$out.$depth") ))" "$full $n"
        check "TREE $depth: frame and END" shape_ok "$out.$depth"
        check "TREE $depth answers within 2 s (took $ms ms)" test "$ms" -lt 2000
    done
    dot_ok "TREE 10 on $n people renders" "$out.10"
    expect_eq "TREE 10: the root is black, no red node has a red child" \
        "$(red_red "$out.10")" "root black, 0 red pairs"
}

# red_red FILE: the root's colour and the red-red edges, read off the DOT.
red_red() {
    awk '/^  n[0-9]+ \[label=/ { split($1, a, "n"); match($0, /fillcolor=[a-z]+/)
                                colour[a[2]] = substr($0, RSTART + 10, RLENGTH - 10) }
         /^  n[0-9]+ -> n[0-9]+;$/ { p = substr($1, 2); c = substr($3, 2, length($3) - 2)
                                     if (colour[p] == "red" && colour[c] == "red") pairs++ }
         END { printf "root %s, %d red pairs\n", colour[1], pairs }' "$1"
}

if start_server fine; then
    case_big_store
    stop_server "$SRV_PID"
fi

# ---- a client that reads nothing holds up no one ---------------------------

# TREE formats its lines after leaving the store. When it formatted them
# under the store lock, a line that met --max-output made the replies held
# back before it go to the client there and then (reply_put sends them
# early), on the socket, under the lock: a client that had stopped reading
# then held the store, every other client waiting, until --write-timeout.
# Now TREE sends the replies held back before it first, before its turn to
# draw and the store lock, then its drawing whole (tree.c).
#
# The setting (threads driver, where a send blocks): --max-output 4096, so
# replies are sent mid-batch past 2048 bytes. Each client A repeats K FINDs
# (K replies just under 2048 bytes, held back) and a TREE whose lines push
# the batch past 4096 bytes but fit by themselves. So every send of A's is
# made from inside a TREE: the K replies as it begins, its drawing once
# made. A never reads, so its socket fills (some MB) inside one of them.
# Client B asks FIND all along, and STATS, until the A clients have stopped
# (commands_total no longer moves): every FIND must be answered within a
# second. STATS's reply_bytes_held then says that A clients are blocked in
# those sends (a blocked write is charged to the reply budget): that says
# the case happened. Rounds go on, three at most, until it has; a round
# has eight A clients, started at eight offsets into the cycle.

STALL_CLIENTS=8

# stats_of FD: STATS on the connection FD; sets ST_COMMANDS, ST_CONNS and
# ST_HELD. 1 when it is not answered within 2 s.
stats_of() {
    ST_COMMANDS="" ST_CONNS="" ST_HELD=""
    send_line "$1" STATS
    while read_line "$1" 2; do
        case $LINE in
        END) return 0 ;;
        "commands_total "*) ST_COMMANDS=${LINE#* } ;;
        "connections_current "*) ST_CONNS=${LINE#* } ;;
        "reply_bytes_held "*) ST_HELD=${LINE#* } ;;
        esac
    done
    return 1
}

# stall_setup: 300 people; K FINDs whose replies (STALL_F bytes each) stay
# under the 2048 mark, then the smallest depth whose TREE passes 4096 with
# them; the A clients' requests, 8 MB of replies' worth, in STALL_REQ.
# Returns 1 (with a not-ok line) when no depth fits.
stall_setup() {
    local out=$TEST_TMP/stall i k t depth
    for ((i = 0; i < 300; i++)); do
        printf 'ADD F%d L%03d 40 000-00-0000\n' "$i" $(( (i * 97) % 300 ))
    done >"$out.add"
    echo QUIT >>"$out.add"
    converse "$SRV_PORT" "$out.add" "$out.add.out" 10

    converse_str "$SRV_PORT" 'FIND F1 L097\nQUIT\n' "$out.find"
    STALL_F=$(( $(wc -c <"$out.find") - 4 ))       # less "Bye\n"
    k=$(( 2047 / STALL_F ))
    for depth in 2 3 4 5 6 7 8; do
        tree "$SRV_PORT" "TREE $depth" "$out.t$depth"
        t=$(wc -c <"$out.t$depth")
        (( k * STALL_F + t > 4096 )) && break
    done
    if ! (( k * STALL_F + t > 4096 && t <= 4096 )) || ! grep -qx END "$out.t$depth"; then
        not_ok "buffered: a TREE that passes 4096 bytes after $k FINDs, alone not (TREE $depth: $t)"
        return 1
    fi
    STALL_CYCLE=$(( k * STALL_F + t ))
    STALL_REQ=$out.req
    awk -v k="$k" -v d="$depth" -v n=$(( 8000000 / STALL_CYCLE )) 'BEGIN {
        for (c = 0; c < n; c++) {
            for (j = 0; j < k; j++) { i = (c * k + j) % 300
                                      printf "FIND F%d L%03d\n", i, (i * 97) % 300 }
            print "TREE " d
        } }' >"$STALL_REQ"
}

# stall_round: one round. Sets R_SLOW (empty, or what was slow), R_PROBES
# (FINDs answered), R_MAX (the slowest, ms), R_QUIET (1 when the A clients
# stopped) and R_INSIDE (the bytes the blocked A clients hold then).
stall_round() {
    local b i j fd pid t0 ms quiet=0 last=-1 deadline want
    local fds=() pids=()
    R_SLOW="" R_PROBES=0 R_MAX=0 R_QUIET=0 R_INSIDE=0
    want=$(print_line F1 L097 40 000-00-0000)
    open_conn "$SRV_PORT"
    b=$CONN
    if ! stats_of "$b"; then
        R_SLOW="STATS not answered within 2 s before the round"
        close_conn "$b"
        return
    fi
    for ((i = 0; i < STALL_CLIENTS; i++)); do
        open_conn "$SRV_PORT"
        fds+=("$CONN")
        # The offset: i eighths of a cycle, as FINDs answered (into the
        # socket) before the cycles begin.
        for ((j = 0; j < i * STALL_CYCLE / STALL_CLIENTS / STALL_F; j++)); do
            echo "FIND F1 L097"
        done >&"$CONN"
    done
    sleep 0.3
    for fd in "${fds[@]}"; do
        cat "$STALL_REQ" >&"$fd" 2>/dev/null &
        pids+=($!)
    done

    # Until commands_total has stood still (B's own aside) for ten rounds.
    deadline=$(( $(now) + 30000000 ))
    while (( $(now) < deadline && quiet < 10 )); do
        t0=$(now)
        send_line "$b" "FIND F1 L097"
        if ! read_line "$b" 2; then
            R_SLOW="FIND not answered within 2 s"
            break
        fi
        ms=$(elapsed_ms "$t0")
        R_PROBES=$((R_PROBES + 1))
        (( ms > R_MAX )) && R_MAX=$ms
        if [[ $LINE != "$want" ]]; then
            R_SLOW="FIND answered '$LINE'"
            break
        elif (( ms > 1000 )); then
            R_SLOW="FIND answered after $ms ms"
            break
        elif ! stats_of "$b"; then
            R_SLOW="STATS not answered within 2 s"
            break
        fi
        (( last >= 0 && ST_COMMANDS - last < 10 )) && quiet=$((quiet + 1)) || quiet=0
        last=$ST_COMMANDS
        sleep 0.1
    done
    (( quiet >= 10 )) && R_QUIET=1 R_INSIDE=${ST_HELD:-0}

    # The A clients close: a session blocked in a send ends at once.
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    for fd in "${fds[@]}"; do
        close_conn "$fd"
    done
    if [[ -z $R_SLOW ]]; then
        for ((i = 0; i < 50; i++)); do     # their sessions end at once
            stats_of "$b" && [[ $ST_CONNS == 1 ]] && break
            sleep 0.1
        done
    fi
    close_conn "$b"
}

case_reader_stalls_no_one() {
    local round what="buffered: FIND answered within 1 s while clients that read nothing send TREEs"
    stall_setup || return
    for round in 1 2 3; do
        stall_round
        [[ -n $R_SLOW || $R_QUIET == 0 || $R_INSIDE -gt 0 ]] && break
    done
    if [[ -n $R_SLOW ]]; then
        not_ok "$what ($R_SLOW, round $round, after $R_PROBES answered)"
    elif [[ $R_QUIET == 0 ]]; then
        not_ok "$what (the other clients still ran after 30 s, round $round)"
    elif [[ $R_INSIDE == 0 ]]; then
        ok "$what # SKIP no client's socket filled inside a TREE in $round rounds"
    else
        ok "$what (round $round: $R_PROBES FINDs, the slowest $R_MAX ms;" \
           "clients blocked inside TREEs held $R_INSIDE bytes)"
    fi
}

# --io threads: the driver whose sends block (the event driver queues).
if start_server buffered --io threads --max-output 4096 --write-timeout 5 \
        --log-level warn; then
    case_reader_stalls_no_one
    stop_server "$SRV_PID"
    expect_eq "buffered: server exits 0 on SIGTERM after the stalled clients" "$STOP_RC" 0
fi

# ---- a broken tree --------------------------------------------------------

# One attempt: a fresh nolock server with a 2 ms race window, four clients
# adding 60 people each at once. Sets BROKEN to what CHECK says (empty when
# the tree held or the server died: nolock may crash; then try again).
BROKEN=""
race_once() {
    local a=$1 c i pids=()
    start_server nolock --race-window 2000 --log-level error || return
    for c in 1 2 3 4; do
        for i in $(seq 1 60); do echo "ADD F$i R${a}C${c}N$i 30 123-45-6789"; done >"$TEST_TMP/race$a-$c.req"
        echo QUIT >>"$TEST_TMP/race$a-$c.req"
        converse "$SRV_PORT" "$TEST_TMP/race$a-$c.req" "$TEST_TMP/race$a-$c.out" 10 &
        pids+=($!)
    done
    wait "${pids[@]}" 2>/dev/null
    RACE=$TEST_TMP/race$a
    if converse_str "$SRV_PORT" 'CHECK\nQUIT\n' "$RACE.check" 5 &&
            [[ $(head -n 1 "$RACE.check") == Error:* ]]; then
        BROKEN=$(head -n 1 "$RACE.check")
        BROKEN=${BROKEN#Error: }
        tree "$SRV_PORT" "TREE 10" "$RACE.tree" || BROKEN="TREE did not answer"
    fi
    stop_server "$SRV_PID" 2>/dev/null
}

# Attempts go on (for 30 s at most) while the tree held, or only lost
# nodes ("count mismatch": no node to mark); the last broken one is used.
deadline=$(( $(now) + 30000000 ))
GOT="" GOT_RACE=""
for attempt in 1 2 3 4 5 6 7 8 9 10; do
    BROKEN=""
    race_once "$attempt" 2>/dev/null
    [[ -n $BROKEN ]] && GOT=$BROKEN GOT_RACE=$RACE
    [[ (-n $BROKEN && $BROKEN != "count mismatch") || $(now) -gt $deadline ]] && break
done
BROKEN=$GOT RACE=$GOT_RACE
if [[ -z $BROKEN ]]; then
    ok "nolock: TREE marks what CHECK finds # SKIP the race did not break the tree in $attempt attempts"
elif [[ $BROKEN == "TREE did not answer" ]]; then
    not_ok "nolock: TREE answers on a broken tree (attempt $attempt)"
else
    echo "# ${RACE##*/}: CHECK said: $BROKEN"
    check "nolock: TREE on the broken tree: frame and END" shape_ok "$RACE.tree"
    dot_ok "nolock: TREE on the broken tree renders" "$RACE.tree"
    check "nolock: TREE's label names what CHECK said first ($BROKEN)" \
        grep -qF "\\nbroken: $BROKEN" "$RACE.tree"
    marked=$(grep -c 'penwidth=4' "$RACE.tree")
    if [[ $BROKEN == "count mismatch" && $marked == 0 ]]; then
        ok "nolock: TREE marks a node # SKIP only nodes were lost: nothing to mark"
    else
        check "nolock: TREE marks $marked nodes or boxes, with the rule" \
            grep -qE 'penwidth=4, xlabel=<<font color="#b00000">(below: )?[a-z]' "$RACE.tree"
    fi
fi

finish
