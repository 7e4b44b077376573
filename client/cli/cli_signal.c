/* cli_signal.c -- Ctrl-C in ssn-cli's loops (-r, --pipe, --stat,
 * --latency): the first SIGINT sets a flag the loop reads between requests,
 * so the run ends with its summary; the handler is then the default again,
 * so a second Ctrl-C ends a run stuck waiting for a server at once.
 */
#include <signal.h>
#include <string.h>
#include "cli.h"
#include "timeutil.h"

#define NAP_SLICE_NS (20 * TIME_NS_PER_MS)     /* a nap checks the flag so often */

/* Set by the signal handler; atomic_int is lock-free on every target we
 * build for, so storing it there is async-signal-safe. */
static atomic_int stop_flag;

static void on_sigint(int sig)
{
    (void)sig;
    atomic_store(&stop_flag, 1);
}

void cli_stop_on_sigint(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESETHAND;         /* the second Ctrl-C is the default */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
}

int cli_stopped(void)
{
    return atomic_load(&stop_flag);
}

atomic_int *cli_stop_flag(void)
{
    return &stop_flag;
}

void cli_nap(double s)
{
    uint64_t end = time_now_ns() + time_s_to_ns(s);
    for (;;) {
        uint64_t now = time_now_ns();
        if (now >= end || cli_stopped())
            return;
        uint64_t left = end - now;
        time_sleep_ns(left < NAP_SLICE_NS ? left : NAP_SLICE_NS);
    }
}
