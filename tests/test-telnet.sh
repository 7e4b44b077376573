#!/bin/bash
# test-telnet.sh -- a person at telnet(1): the real telnet client runs in a
# tmux pane, keys are typed with send-keys and the screen is read back with
# capture-pane. The case that matters is Ctrl-C: telnet sends IAC IP and
# IAC DO TIMING-MARK and discards everything the server sends until it
# answers TIMING-MARK. A server that never answers leaves the person typing
# into silence; this one answers IAC WONT TIMING-MARK (common/telnet.c), so
# the next COUNT shows. tmux and telnet come from tools/install-deps; when
# either is missing the script prints one "ok - # SKIP" line instead.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

for tool in tmux telnet; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        ok "# SKIP $tool is not installed (tools/install-deps installs it)"
        finish
    fi
done

# A tmux server of our own, on a socket in the scratch directory: it can be
# killed whole without touching anybody else's tmux.
TMUX_SOCK=$TEST_TMP/tmux.sock
tm() { tmux -S "$TMUX_SOCK" "$@"; }
kill_tmux() { tm kill-server >/dev/null 2>&1; }
srv_on_exit kill_tmux           # runs before the scratch directory goes
unset TMUX                      # when run from inside tmux: ours, not theirs

PANE=$TEST_TMP/pane.txt

# screen: the pane's text into $PANE.
screen() { tm capture-pane -p -t ssn >"$PANE" 2>/dev/null; }

# wait_screen DESC TEST...: polls the pane every 50 ms, for at most 5 s,
# until TEST (run with the screen in $PANE) succeeds; ok or not ok.
wait_screen() {
    local desc=$1 i
    shift
    for ((i = 0; i < 100; i++)); do
        screen
        if "$@"; then ok "$desc"; return 0; fi
        sleep 0.05
    done
    not_ok "$desc"
    sed 's/^/#   pane: /' "$PANE" | grep -v '^#   pane: $' | tail -n 12
    return 1
}

# count_lines N: at least N lines of the pane are exactly the count "1".
count_lines() { [[ $(grep -cx '1' "$PANE") -ge $1 ]]; }
has_line() { grep -qx -- "$1" "$PANE"; }
has_text() { grep -qF -- "$1" "$PANE"; }
# telnet says "Connection closed." as quit closes, or has exited cleanly
# with the line not on the screen (seen once in make check); the server's
# log of the close is checked at the end either way.
closed_or_gone() {
    has_text "Connection closed" || grep -q 'Pane is dead (status 0' "$PANE"
}

start_server buffered --log-level debug || finish

# TERM for the pane's programs; none is needed to drive tmux itself.
if ! TERM=${TERM:-xterm} tm new-session -d -s ssn -x 120 -y 30 \
        "telnet 127.0.0.1 $SRV_PORT" </dev/null; then
    not_ok "tmux starts telnet in a detached session"
    finish
fi
tm set-option -t ssn remain-on-exit on >/dev/null  # keep telnet's last words

wait_screen "telnet connects (its banner is on the screen)" \
    has_text "Escape character is" || finish

tm send-keys -t ssn 'ADD John Smith 30 123-45-6789' Enter
wait_screen "ADD John Smith ...: the pane shows OK" has_line OK
tm send-keys -t ssn 'COUNT' Enter
wait_screen "COUNT: the pane shows 1" count_lines 1

# Ctrl-C: telnet sends IAC IP, IAC DO TIMING-MARK and goes deaf until the
# server answers the timing mark.
tm send-keys -t ssn C-c
tm send-keys -t ssn 'COUNT' Enter
wait_screen "after Ctrl-C, COUNT's reply shows again (TIMING-MARK answered)" \
    count_lines 2
tm send-keys -t ssn 'ADD Jane Doe 29 987-65-4321' Enter
tm send-keys -t ssn 'COUNT' Enter
wait_screen "after Ctrl-C the session goes on: ADD, then COUNT shows 2" \
    has_line 2

# Ctrl-] and quit: telnet's own prompt, then it closes and exits.
tm send-keys -t ssn C-]
wait_screen "Ctrl-] opens telnet's prompt" has_text "telnet>"
tm send-keys -t ssn 'quit' Enter
wait_screen "quit at telnet's prompt closes the connection" closed_or_gone

converse_str "$SRV_PORT" "COUNT\nCHECK\nDONE\n" "$TEST_TMP/after.out"
expect_eq "the server kept both people and its tree" \
    "$(cat "$TEST_TMP/after.out")" $'2\nOK 2 entries, all invariants hold\nBye'
kill_tmux
stop_server "$SRV_PID"
expect_eq "server stops cleanly after the telnet session" "$STOP_RC" 0
check "the server logged telnet's connection and its close" \
    grep -qE 'connection from 127\.0\.0\.1:[0-9]+ closed' "$SRV_ERR"

finish
