# tests/lib/acked.sh -- what the clients were told, against what a
# restarted server holds: the bookkeeping of tests/test-journal-nomem.sh
# and tools/soak-journal. Sourced, never run; plain bash and awk.
#
# A client sends a load (one ADD or DELETE per line, "ADD FIRST LAST AGE
# SSN" / "DELETE FIRST LAST", perhaps a QUIT at the end) on one connection
# and saves every byte it reads back. Replies come in order, one line per
# request, so the i-th whole reply line answers the i-th request; a
# request past the last whole line was sent but never answered (in flight
# when the server died, or never read), and may or may not have been
# applied. Only a whole "OK" line counts as an acknowledgement.
#
# A fates file holds one line per name ever sent, "FIRST LAST STATE":
#   in     the last thing acknowledged about it put it in the store
#   out    the last thing acknowledged took it out (or an ADD was refused
#          and nothing before it had put it in)
#   maybe  something sent about it was never answered
#
#   acked_fold FATES LOAD REPLIES   folds one client's answered requests
#                                   into FATES (created when missing)
#   acked_present PRINT_OUT PRESENT the names of a PRINT reply, "FIRST LAST"
#                                   a line; 1 when the listing is not whole
#   acked_check FATES PRESENT BAD   every "in" name present, no "out" name
#                                   present, nothing present that was never
#                                   sent; one line per breach into BAD (and
#                                   1) else 0
#   acked_settle FATES PRESENT      each "maybe" becomes what the restart
#                                   shows (with kill -9 only, what a restart
#                                   replayed stays: it is in the file)
#   acked_count REPLIES             how many whole "OK" lines

acked_fold() {
    local fates=$1 load=$2 replies=$3 whole
    whole=$(mktemp "${TMPDIR:-/tmp}/acked.XXXXXX") || return 1
    # Only whole lines: a reply cut by the kill is no acknowledgement.
    head -n "$(wc -l <"$replies")" "$replies" >"$whole"
    touch "$fates"
    awk 'FILENAME == ARGV[1] { fate[$1 " " $2] = $3; next }
         FILENAME == ARGV[2] { ack[FNR] = $0; next }
         $1 != "ADD" && $1 != "DELETE" { next }
         { k = $2 " " $3
           if (!(FNR in ack) || fate[k] == "maybe") { fate[k] = "maybe"; next }
           if (ack[FNR] == "OK") fate[k] = ($1 == "ADD") ? "in" : "out"
           else if (!(k in fate)) fate[k] = "out" }
         END { for (k in fate) print k, fate[k] }' \
        "$fates" "$whole" "$load" >"$fates.new" && mv "$fates.new" "$fates"
    local rc=$?
    rm -f "$whole"
    return $rc
}

acked_present() {
    awk -F'[ ,]+' '/ -- / { print $2 " " $1 }' "$1" >"$2"
    # PRINT ends with its dashed line; COUNT after it, when asked, gives
    # the number the listing must hold.
    local n
    n=$(awk '/^[0-9]+$/ { c = $0 } END { print c }' "$1")
    [[ -n $n && $n == "$(wc -l <"$2")" ]]
}

acked_check() {
    awk 'FILENAME == ARGV[1] { fate[$1 " " $2] = $3; next }
         { have[$0] = 1
           if (!($0 in fate)) { print "never sent, yet present: " $0; bad++ } }
         END { for (k in fate) {
                 if (fate[k] == "in" && !(k in have)) { print "acknowledged ADD lost: " k; bad++ }
                 if (fate[k] == "out" && (k in have)) { print "acknowledged DELETE undone: " k; bad++ } }
               exit bad > 0 }' "$1" "$2" >"$3"
}

acked_settle() {
    awk 'FILENAME == ARGV[1] { have[$0] = 1; next }
         { k = $1 " " $2
           if ($3 == "maybe") $3 = (k in have) ? "in" : "out"
           print }' "$2" "$1" >"$1.new" && mv "$1.new" "$1"
}

acked_count() {
    head -n "$(wc -l <"$1")" "$1" | grep -c '^OK$'
}
