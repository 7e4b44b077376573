# tests/lib/acked.sh -- what the clients were told, against what a
# restarted server holds: the books of tests/test-journal-nomem.sh and
# tools/soak-journal. Sourced, never run; bash and POSIX awk (Debian's is
# mawk), a handful of processes per call: a loaded machine forks slowly.
#
# A client sends a load (one ADD or DELETE per line, "ADD FIRST LAST AGE
# SSN" / "DELETE FIRST LAST", perhaps a QUIT at the end) on one connection
# and saves every byte it reads back. Replies come in order, one line per
# request, so the i-th whole reply line answers the i-th request; a
# request past the last whole line was sent but never answered (in flight
# when the server died, or never sent at all), and may or may not have
# been applied. Only a whole "OK" line counts as an acknowledgement: a
# line the kill cut is none.
#
# A fates file holds one line per name, "FIRST LAST STATE":
#   in     the last thing acknowledged about it put it in the store
#   out    the last thing acknowledged took it out (or an ADD was refused
#          and nothing before it had put it in)
#   maybe  something sent about it was never answered
#
#   acked_fold FATES LOAD REPLIES [LOAD REPLIES]...
#         folds each client's answered requests into FATES (created when
#         missing); ACKED is the number of acknowledgements among them
#   acked_check FATES LISTING BAD
#         LISTING is the reply to PRINT then COUNT: 2 when the listing is
#         not whole (fewer lines than COUNT says); else every "in" name
#         present, no "out" name present, nothing present that no client
#         sent, or one line per breach into BAD and 1; PRESENT is how many
#         people the listing holds
#   acked_settle FATES LISTING
#         each "maybe" becomes what LISTING shows (with kill -9 only, what
#         a restart replayed is in the file and must stay), and the names
#         out of the store are dropped from FATES (one that came back
#         would show as never sent)

# The "FIRST LAST" of each person in a PRINT listing ("Last, First  --
# SSN  AGE"), as an awk fragment: the listing's lines are those with " --".
_ACKED_NAME='/ -- / { split($0, w, /[ ,]+/); name = w[2] " " w[1] }'

acked_fold() {
    local fates=$1 loads=() replies=() whole=() args=() n f k
    shift
    touch "$fates" || return 1
    while (($# >= 2)); do
        loads+=("$1")
        replies+=("$2")
        shift 2
    done
    # The whole reply lines of each client, one wc for them all (its
    # lines in the order of its arguments, then the total).
    while read -r n f; do
        whole+=("$n")
    done < <(wc -l "${replies[@]}")
    for ((k = 0; k < ${#loads[@]}; k++)); do
        args+=("p=$k" role=r "n=${whole[k]}" "${replies[k]}" role=l "${loads[k]}")
    done
    awk -v out="$fates.new" '
        role == "f" { fate[$1 " " $2] = $3; next }
        role == "r" { if (FNR <= n) { ack[p, FNR] = $0; if ($0 == "OK") acked++ }
                      next }
        $1 != "ADD" && $1 != "DELETE" { next }
        { k = $2 " " $3
          if (!((p, FNR) in ack) || fate[k] == "maybe") { fate[k] = "maybe"; next }
          if (ack[p, FNR] == "OK") fate[k] = ($1 == "ADD") ? "in" : "out"
          else if (!(k in fate)) fate[k] = "out" }
        END { for (k in fate) print k, fate[k] >out
              print acked + 0 }' role=f "$fates" "${args[@]}" >"$fates.acked" &&
        mv "$fates.new" "$fates" && read -r ACKED <"$fates.acked"
}

acked_check() {
    local rc
    : >"$3"
    awk -v bad="$3" -v cnt="$3.count" '
        FILENAME == ARGV[1] { fate[$1 " " $2] = $3; next }
        /^[0-9]+$/ { count = $0; next }
        '"$_ACKED_NAME"'
        / -- / { have[name] = 1; listed++
                 if (!(name in fate)) { print "never sent, yet present: " name >bad; b++ } }
        END { print listed + 0 >cnt
              if (count == "" || count != listed + 0) exit 2
              for (k in fate) {
                if (fate[k] == "in" && !(k in have)) { print "acknowledged ADD lost: " k >bad; b++ }
                if (fate[k] == "out" && (k in have)) { print "acknowledged DELETE undone: " k >bad; b++ } }
              exit b > 0 }' "$1" "$2"
    rc=$?
    read -r PRESENT <"$3.count"
    return $rc
}

acked_settle() {
    awk -v out="$1.new" '
        FILENAME == ARGV[1] { fate[$1 " " $2] = $3; next }
        '"$_ACKED_NAME"'
        / -- / { have[name] = 1 }
        END { for (k in fate) {
                s = fate[k]
                if (s == "maybe") s = (k in have) ? "in" : "out"
                if (s == "in") print k, s >out }
              close(out) }' "$1" "$2" && touch "$1.new" && mv "$1.new" "$1"
}
