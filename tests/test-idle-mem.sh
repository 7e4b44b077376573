#!/bin/bash
# test-idle-mem.sh -- what an idle connection costs the server, as
# tools/bench-idle-mem measures it (RSS above the empty server, over 1000
# connections that each answered one lookup): at most 560 bytes with
# --io events, below memcached's 600 (between requests its session goes
# back to its worker's pool whole, session_park.c, as do its buffers;
# its fd-less events and waiters are made only when first needed: 798
# bytes with a session kept, 1,934 before those), and at most 12 kB with
# a thread per connection
# (its 64 kB stack, of which one request at a time touches two pages). A
# 3 kB frame on the request path once made every session thread touch a
# third page (cmd_hold.c's look-ahead, now in functions of its own); this
# fails on such a change.
# run-all: beside
source "$(dirname "$0")/lib/common.sh"

N=1000
out=$TEST_TMP/idle.txt
if ! timeout 120 tools/bench-idle-mem --bin "$BIN" --conns "$N" \
        threads events >"$out" 2>&1; then
    fail "bench-idle-mem --conns $N threads events ran"
    cat "$out"
    finish
fi
ok "bench-idle-mem --conns $N threads events ran"

# bytes_of SERVER: its bytes/conn column.
bytes_of() {
    awk -v s="$1" '$1 == s { print $4 }' "$out"
}

t=$(bytes_of threads)
e=$(bytes_of events)
check "a thread per connection: $t bytes an idle connection (<= 12288)" \
    test -n "$t" -a "${t:-99999}" -le 12288
check "--io events: $e bytes an idle connection (<= 560)" \
    test -n "$e" -a "${e:-99999}" -le 560

# A server it does not know is refused, by name (once a KeyError trace).
msg=$(tools/bench-idle-mem --conns 10 bin/ssnserver-buffered 2>&1)
rc=$?
check "bench-idle-mem bin/ssnserver-buffered: status 2, naming it" \
    test "$rc" -eq 2 -a -n "$(printf '%s' "$msg" | grep -F "'bin/ssnserver-buffered' is not a server")"
finish
