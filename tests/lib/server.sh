# tests/lib/server.sh -- starting and stopping ssnserver processes from a
# bash script: the integration tests (through tests/lib/common.sh), the
# valgrind test, tools/demo and tools/race-lab. Sourced, never run; needs
# bash 4.3 or later and /proc. Callers word their own messages; this file
# prints nothing.
#
#   srv_start OUT ERR SECONDS CMD [ARGS...]
#         runs CMD ARGS in the background (a server told to listen on port
#         0, perhaps under a wrapper such as valgrind), stdout to OUT,
#         stderr to ERR, stdin from /dev/null, and waits up to SECONDS for
#         OUT's first line to read "listening on ADDR:PORT". Sets SRV_PID,
#         SRV_ADDR and SRV_PORT and returns 0; or, when the server exited or
#         never said so, stops it, leaves the first line seen in SRV_LINE and
#         returns 1. Call it from the script's own shell, not a subshell.
#   srv_launch OUT ERR CMD [ARGS...]
#         srv_start without the wait: runs CMD ARGS in the background the
#         same way and sets SRV_PID, for a caller that watches OUT itself
#         (OUT may be a FIFO: the server's open blocks until the caller
#         opens the other end). Returns 1 from a subshell.
#   srv_running PID             0 while PID is a server started here that
#                               has not exited
#   srv_signal SIG PID          sends SIG, but only to such a server
#   srv_wait_gone PID SECONDS   0 once it has exited (SECONDS may be "2.5")
#   srv_stop PID [SIG [SECONDS]]
#         sends SIG (TERM), waits up to SECONDS (3), then sends KILL, and
#         reaps it: SRV_RC is its exit status, SRV_HOW says "stopped",
#         "killed" (it outlived SIG) or "died" (it was gone before SIG).
#         Returns 1, touching nothing, for a PID not launched here
#         or that was stopped already.
#   srv_stop_all                every server still running: TERM, 2 s, KILL
#   srv_on_exit FUNC            runs FUNC at exit, after srv_stop_all
#
# Safety: only PIDs that srv_start or srv_launch launched are ever
# signalled, and only while /proc says the PID is still that process: our
# child, not a zombie, with the start time recorded at launch, so a PID that
# was reaped and then reused by another process is never taken for ours.
# Sourcing this file sets the EXIT trap (so no server outlives the script:
# scripts add their own clean-up with srv_on_exit, not with a trap of their
# own) and INT and TERM traps that exit so that it runs; a script may
# replace those two with its own, as long as they exit.
#
# BIN (default bin) is where the callers find the servers and clients.

BIN=${BIN:-bin}
declare -A SRV_STARTED=()       # pid -> its start time in clock ticks, or
                                # "" when it was gone before it was read
SRV_EXIT_FUNCS=()

# _srv_stat PID: the fields of /proc/PID/stat after the command name into
# _SRV_F (state is [0], parent [1], start time [19]); 1 when there is none.
_srv_stat() {
    local line
    IFS= read -r line 2>/dev/null <"/proc/$1/stat" || return 1
    read -r -a _SRV_F <<<"${line##*) }"
}

# _srv_us SECONDS: SECONDS ("3", "2.5") in microseconds, into _SRV_US.
_srv_us() {
    local s=${1%.*} f=0
    [[ $1 == *.* ]] && f=${1#*.}
    f=${f}000000
    _SRV_US=$(( ${s:-0} * 1000000 + 10#${f:0:6} ))
}

srv_running() {
    local want=${1:+${SRV_STARTED[$1]-}}
    [[ -n $want ]] && _srv_stat "$1" &&
        [[ ${_SRV_F[0]} != Z && ${_SRV_F[1]} == "$$" && ${_SRV_F[19]} == "$want" ]]
}

srv_signal() {
    srv_running "$2" && kill "-$1" "$2" 2>/dev/null
}

srv_wait_gone() {
    _srv_us "$2"
    local deadline=$(( ${EPOCHREALTIME/[.,]/} + _SRV_US ))
    while srv_running "$1"; do
        (( ${EPOCHREALTIME/[.,]/} < deadline )) || return 1
        sleep 0.02
    done
    return 0
}

srv_launch() {
    local out=$1 err=$2
    shift 2
    SRV_PID=""
    [[ $BASHPID == "$$" ]] || return 1
    "$@" >"$out" 2>"$err" </dev/null &
    SRV_PID=$!
    # Its identity, read at once. A child that already exited and was
    # reaped keeps an empty one: srv_stop still collects its status, but it
    # never counts as running.
    SRV_STARTED[$SRV_PID]=""
    _srv_stat "$SRV_PID" && SRV_STARTED[$SRV_PID]=${_SRV_F[19]}
}

srv_start() {
    local out=$1 err=$2 secs=$3 line=""
    shift 3
    SRV_PID="" SRV_ADDR="" SRV_PORT="" SRV_LINE=""
    if [[ $BASHPID != "$$" ]]; then
        SRV_LINE="srv_start called from a subshell"
        return 1
    fi
    # A fresh file before the server starts: an old port is no answer.
    : >"$out" || return 1
    srv_launch "$out" "$err" "$@"
    _srv_us "$secs"
    local deadline=$(( ${EPOCHREALTIME/[.,]/} + _SRV_US ))
    while :; do
        # Only a whole line counts: a port still being written is no port.
        IFS= read -r line <"$out" || line=""
        if [[ $line =~ ^listening\ on\ (.+):([0-9]+)$ ]]; then
            SRV_ADDR=${BASH_REMATCH[1]} SRV_PORT=${BASH_REMATCH[2]}
            return 0
        fi
        srv_running "$SRV_PID" || break
        (( ${EPOCHREALTIME/[.,]/} < deadline )) || break
        sleep 0.02
    done
    SRV_LINE=$line
    srv_stop "$SRV_PID" TERM 1
    return 1
}

srv_stop() {
    local pid=$1 sig=${2:-TERM} secs=${3:-3}
    SRV_HOW="" SRV_RC=""
    [[ -n $pid && -v SRV_STARTED[$pid] ]] || return 1     # not launched here
    SRV_HOW=stopped
    if ! srv_signal "$sig" "$pid"; then
        SRV_HOW=died
    elif ! srv_wait_gone "$pid" "$secs"; then
        srv_signal KILL "$pid"
        SRV_HOW=killed
    fi
    wait "$pid" 2>/dev/null
    SRV_RC=$?
    unset 'SRV_STARTED[$pid]'
}

srv_stop_all() {
    local pid
    for pid in "${!SRV_STARTED[@]}"; do
        srv_signal TERM "$pid"
    done
    for pid in "${!SRV_STARTED[@]}"; do
        srv_wait_gone "$pid" 2 || srv_signal KILL "$pid"
    done
}

srv_on_exit() {
    SRV_EXIT_FUNCS+=("$1")
}

_srv_exit() {
    local fn
    srv_stop_all
    for fn in "${SRV_EXIT_FUNCS[@]}"; do
        "$fn"
    done
}

trap _srv_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
