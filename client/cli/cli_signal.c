/* cli_signal.c -- Ctrl-C in ssn-cli's loops (-r, --pipe, --stat,
 * --latency): the first SIGINT sets a flag the loop reads between requests,
 * so the run ends with its summary; a second one, from CLI_SIGINT_AGAIN_NS
 * after the first on, ends a run stuck waiting for a server at once. The
 * grace matters: timeout(1) and some shells deliver one interrupt twice
 * (to the process, then to its group), and that must still end cleanly.
 */
#include <signal.h>
#include <string.h>
#include "cli.h"
#include "timeutil.h"

#define NAP_SLICE_NS (20 * TIME_NS_PER_MS)     /* a nap checks the flag so often */
#define CLI_SIGINT_AGAIN_NS (500 * TIME_NS_PER_MS)  /* a second Ctrl-C counts
                                                       from then on */

/* Set by the signal handler. Both are lock-free atomics on every target we
 * build for, so the handler may store them (async-signal-safe), and
 * clock_gettime, signal and raise are async-signal-safe too. */
static atomic_int stop_flag;
static _Atomic uint64_t first_ns;       /* when the first SIGINT came; 0: none */

static void on_sigint(int sig)
{
    uint64_t now = time_now_ns();
    uint64_t first = atomic_load(&first_ns);

    if (first == 0) {
        atomic_store(&first_ns, now ? now : 1);
        atomic_store(&stop_flag, 1);
    } else if (now - first >= CLI_SIGINT_AGAIN_NS) {
        signal(sig, SIG_DFL);           /* die of it, as the shell expects */
        raise(sig);
    }
}

void cli_stop_on_sigint(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigint;
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
