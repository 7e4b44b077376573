#!/bin/bash
# test-server-keepalive.sh -- a peer that vanishes without a FIN (its
# link goes down, as when a laptop leaves the network) is found by TCP
# keepalive and its connection freed (--tcp-keepalive, docs/LIMITS.md), in
# both I/O models; with --tcp-keepalive 0 it is still counted.
#
# Two network namespaces this test creates and deletes, joined by a veth
# pair: the server's (10.77.0.1, where it listens on every address of that
# namespace only) and the client's (10.77.0.2). The client connects and
# is served; then its end of the link goes down, so the server's probes go
# unanswered. Needs root and ip(8) (iproute2); says why and fails when it
# cannot make the namespaces.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/limits.sh"

NS_S=ssn-ka-s-$$ NS_C=ssn-ka-c-$$
VS=ssnka$$s VC=ssnka$$c
VS=${VS:0:15} VC=${VC:0:15}

netns_down() {
    ip netns del "$NS_C" 2>/dev/null
    ip netns del "$NS_S" 2>/dev/null
}

netns_up() {
    netns_down
    ip netns add "$NS_S" && ip netns add "$NS_C" &&
    ip link add "$VS" type veth peer name "$VC" &&
    ip link set "$VS" netns "$NS_S" && ip link set "$VC" netns "$NS_C" &&
    ip -n "$NS_S" addr add 10.77.0.1/24 dev "$VS" &&
    ip -n "$NS_C" addr add 10.77.0.2/24 dev "$VC" &&
    ip -n "$NS_S" link set lo up && ip -n "$NS_S" link set "$VS" up &&
    ip -n "$NS_C" link set lo up && ip -n "$NS_C" link set "$VC" up
}

# stat_in_ns NAME: STATS over the server namespace's loopback.
stat_in_ns() {
    STAT=$(ip netns exec "$NS_S" timeout 3 bash -c '
        exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
        printf "STATS\nQUIT\n" >&3
        cat <&3' _ "$SRV_PORT" | awk -v k="$1" '$1 == k { print $2 }')
}

# case_vanish IO KEEPALIVE: the client goes silent; with keepalive K the
# server frees it within K + 3 probes (K/3 apart) + slack.
case_vanish() {
    local io=$1 ka=$2 client i freed=0
    netns_up || { not_ok "keepalive: make two network namespaces (root, iproute2)"; return; }
    # The server runs in its namespace: start_server's wrapper execs it.
    start_under "ip netns exec $NS_S" buffered -b 0.0.0.0 --unprotected \
        --io "$io" --tcp-keepalive "$ka" || { netns_down; return; }
    ip netns exec "$NS_C" timeout 60 bash -c '
        exec 3<>"/dev/tcp/10.77.0.1/$1" || exit 1
        printf "COUNT\n" >&3
        IFS= read -r -t 5 line <&3 && [[ $line == 0 ]] || exit 2
        echo served >"$2"
        sleep 60' _ "$SRV_PORT" "$TEST_TMP/served" &
    client=$!
    for ((i = 0; i < 50; i++)); do [[ -e $TEST_TMP/served ]] && break; sleep 0.1; done
    check "keepalive $io $ka: the client in the other namespace is served" \
        test -e "$TEST_TMP/served"
    ip -n "$NS_C" link set "$VC" down       # it vanishes: no FIN, no RST
    # Keepalive 2: probes from 2 s on, 1 s apart, 3 of them: freed by
    # about 5 s; 8 s allows for a loaded machine (and bounds the off case).
    for ((i = 0; i < 16; i++)); do
        sleep 0.5
        stat_in_ns connections_current     # this STATS connection is 1
        [[ $STAT == 1 ]] && { freed=1; break; }
        [[ $STAT == 2 ]] || { not_ok "keepalive $io $ka: STATS over the namespace's loopback (got '$STAT')"; break; }
    done
    if [[ $ka == 0 ]]; then
        check "keepalive off: after 8 s the vanished peer is still counted" \
            test "$freed" -eq 0
    else
        check "keepalive $io $ka: the vanished peer is freed within 8 s" \
            test "$freed" -eq 1
    fi
    kill "$client" 2>/dev/null; wait "$client" 2>/dev/null
    stop_server "$SRV_PID"
    expect_eq "keepalive $io $ka: exit 0" "$STOP_RC" 0
    rm -f "$TEST_TMP/served"
    netns_down
}

if [[ $(id -u) != 0 ]] || ! command -v ip >/dev/null; then
    not_ok "keepalive: needs root and ip(8) to make network namespaces"
    finish
fi
srv_on_exit netns_down
for io in threads events; do case_vanish "$io" 2; done
case_vanish threads 0
finish
