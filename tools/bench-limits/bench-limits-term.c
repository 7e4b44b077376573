/* bench-limits-term.c -- bench-limits' sigterm part (docs/LIMITS.md): N
 * idle connections, then SIGTERM to the server; the time until /proc says
 * it has exited. The only signal this program sends, and only to
 * --server-pid, which bench-limits.c has checked is the process listening
 * on --port.
 */
#include "bench-limits.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-util.h"
#include "jsonw.h"
#include "net.h"

/* Entries of /proc/PID/fd, or -1. */
static long count_fds(pid_t pid)
{
    char path[64];
    long n = 0;

    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return -1;
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n - 2;               /* . and .. */
}

/* Our connections the server has closed (refused: --max-clients). */
static unsigned long count_closed(struct pollfd *p, unsigned long n)
{
    unsigned long closed = 0;

    if (poll(p, n, 0) <= 0)
        return 0;
    for (unsigned long i = 0; i < n; i++)
        closed += (p[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
    return closed;
}

/* Until the server has taken (or refused) every connection we made: its
 * descriptors grew by what it holds, and it closed what it refused. Gives
 * up when nothing changed for 2 s (a server out of descriptors leaves the
 * rest in the listen backlog), or after SETTLE_S. */
static void term_settle(const struct server_info *si, long base,
                        struct pollfd *p, struct term_result *tr)
{
    long last = -1;
    double t0 = bench_now(), still = t0;

    while (bench_now() - t0 < SETTLE_S) {
        long fds = count_fds(si->pid);
        tr->refused = count_closed(p, tr->opened);
        tr->held = fds < 0 ? -1 : fds - base;
        if (tr->held + (long)tr->refused >= (long)tr->opened)
            break;
        if (tr->held + (long)tr->refused != last)
            last = tr->held + (long)tr->refused, still = bench_now();
        else if (bench_now() - still > 2.0)
            break;
        time_sleep_ns(100 * TIME_NS_PER_MS);
    }
    tr->settle_s = bench_now() - t0;
}

int run_sigterm(const struct opts *o, const struct server_info *si,
                struct term_result *tr, char *err, size_t errlen)
{
    struct stats st;
    struct pollfd *p = calloc(o->idle, sizeof *p);
    char e[200];

    memset(tr, 0, sizeof *tr);
    tr->held = tr->current = -1;
    if (p == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    tr->nofile = raise_nofile(o->idle + 16);
    unsigned long room = tr->nofile > 16 ? tr->nofile - 16 : 0;
    unsigned long want = o->idle < room ? o->idle : room;
    if (want < o->idle)
        snprintf(tr->note, sizeof tr->note, "open-file limit %llu: %lu "
                 "connections, not %lu", (unsigned long long)tr->nofile,
                 want, o->idle);
    long base = count_fds(si->pid);
    double t0 = bench_now();
    for (; tr->opened < want; tr->opened++) {
        int fd = net_connect(o->host, o->port, 0, 0, CONNECT_MS, e, sizeof e);
        if (fd < 0) {
            snprintf(tr->note, sizeof tr->note, "after %lu: %.150s",
                     tr->opened, e);
            break;
        }
        p[tr->opened] = (struct pollfd){ .fd = fd, .events = POLLRDHUP };
    }
    tr->open_s = bench_now() - t0;
    term_settle(si, base, p, tr);
    if (stats_fetch(o, &st, e, sizeof e) == 0)     /* refused when full */
        tr->current = stats_num(&st, "connections_current") - 1;
    tr->exit_ms = -1;
    if (proc_gone(si)) {
        snprintf(err, errlen, "the server (pid %d) is gone before SIGTERM",
                 (int)si->pid);
        goto out;
    }
    if (!o->json)
        fprintf(stderr, PROG ": SIGTERM to pid %d\n", (int)si->pid);
    uint64_t s = time_now_ns();
    if (kill(si->pid, SIGTERM) != 0) {
        snprintf(err, errlen, "kill %d: %s", (int)si->pid, strerror(errno));
        goto out;
    }
    while (!proc_gone(si) && time_now_ns() - s < time_s_to_ns(EXIT_WAIT_S))
        time_sleep_ns(TIME_NS_PER_MS);
    if (proc_gone(si))
        tr->exit_ms = time_ns_to_ms(time_now_ns() - s);
out:
    for (unsigned long i = 0; i < tr->opened; i++)
        close(p[i].fd);
    free(p);
    return err[0] ? -1 : 0;
}

void print_sigterm(const struct opts *o, const struct term_result *tr)
{
    printf("\n## sigterm: %lu idle connections, then SIGTERM\n", o->idle);
    printf("%-44s %lu in %.2f s\n", "connections opened", tr->opened,
           tr->open_s);
    printf("%-44s %lu\n", "refused (closed by the server)", tr->refused);
    printf("%-44s %ld (after %.1f s)\n", "held: the server's descriptors "
           "grew by", tr->held, tr->settle_s);
    if (tr->current >= 0)
        printf("%-44s %lld\n", "STATS connections_current (less its own)",
               tr->current);
    if (tr->exit_ms >= 0)
        printf("%-44s %.1f ms\n", "SIGTERM to exit", tr->exit_ms);
    else
        printf("%-44s still running after %.0f s\n", "SIGTERM to exit",
               EXIT_WAIT_S);
    if (tr->note[0])
        printf("note: %s\n", tr->note);
}

void json_sigterm(const struct opts *o, const struct term_result *tr)
{
    printf("\"sigterm\": {\"idle\": %lu, \"opened\": %lu, \"open_s\": %.3f, "
           "\"refused\": %lu, \"settle_s\": %.3f, \"nofile\": %llu, ",
           o->idle, tr->opened, tr->open_s, tr->refused, tr->settle_s,
           (unsigned long long)tr->nofile);
    json_ll("held", tr->held);
    json_ll("connections_current", tr->current);
    printf("\"exit_ms\": ");
    if (tr->exit_ms >= 0)
        printf("%.1f", tr->exit_ms);
    else
        printf("null");
    printf(", \"note\": ");
    json_write_str(stdout, tr->note);
    printf("}");
}
