/* bench_stats.c -- STATS around a run (bench_stats.h). One short
 * conversation each time, on a connection that is not one of the run's,
 * through the control helpers kill_it uses (client/lib/ctl.h). STATS has
 * counts and times only, never a name or an SSN.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_stats.h"
#include "cliutil.h"
#include "ctl.h"

static void stats_line(void *arg, const char *line)
{
    static const struct { const char *name; size_t off; } f[] = {
        { "lock_acquisitions", offsetof(struct bench_stats, acquisitions) },
        { "lock_contended", offsetof(struct bench_stats, contended) },
        { "lock_wait_us", offsetof(struct bench_stats, wait_us) },
        { "lock_hold_us", offsetof(struct bench_stats, hold_us) },
    };
    struct bench_stats *s = arg;
    const char *sp = strchr(line, ' ');

    if (!sp)
        return;
    size_t n = (size_t)(sp - line);
    if (n == 4 && strncmp(line, "mode", 4) == 0) {
        snprintf(s->mode, sizeof(s->mode), "%.15s", sp + 1);
        return;
    }
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
        if (strlen(f[i].name) == n && strncmp(line, f[i].name, n) == 0 &&
            cli_parse_count(sp + 1, (uint64_t *)((char *)s + f[i].off)))
            s->bad = 1;         /* "-1", "1e308", past 2^64, junk after */
}

int bench_stats_read(const struct bench_plan *p, struct bench_stats *s,
                     char *err, size_t errlen)
{
    struct ctl c;

    memset(s, 0, sizeof(*s));
    if (ctl_open(&c, p->host, p->port, BENCH_STATS_MS)) {
        snprintf(err, errlen, "%s", c.err);
        return -1;
    }
    if ((p->password && ctl_auth(&c, p->password)) ||
        ctl_query_block(&c, "STATS", stats_line, s)) {
        snprintf(err, errlen, "STATS: %s", c.err);
        ctl_abandon(&c);
        return -1;
    }
    ctl_close(&c);
    if (!s->mode[0]) {
        snprintf(err, errlen, "STATS has no mode line: not ssnserver?");
        return -1;
    }
    if (s->bad) {
        snprintf(err, errlen, "STATS has a lock figure that is no count: "
                 "not ssnserver?");
        return -1;
    }
    if (s->contended > s->acquisitions) {
        snprintf(err, errlen, "STATS has more contended acquisitions than "
                 "acquisitions: not ssnserver?");
        return -1;
    }
    return 0;
}

int bench_stats_while_connected(const struct bench_stats *s)
{
    return strcmp(s->mode, "coarse") != 0 && strcmp(s->mode, "serial") != 0;
}

/* A counter's change; 0 when it went down (a STATS RESET meanwhile). */
static uint64_t delta(uint64_t before, uint64_t after)
{
    return after >= before ? after - before : 0;
}

void bench_stats_delta(const struct bench_stats *before,
                       const struct bench_stats *after, int preload_included,
                       struct bench_server_lock *l)
{
    memset(l, 0, sizeof(*l));
    l->known = 1;
    snprintf(l->mode, sizeof(l->mode), "%s", after->mode);
    l->preload_included = preload_included;
    /* The after read's STATS took the lock once itself (where there is
     * one), and counted that before it read the figures. */
    l->acquisitions = delta(before->acquisitions, after->acquisitions);
    if (l->acquisitions)
        l->acquisitions--;
    l->contended = delta(before->contended, after->contended);
    l->wait_us = delta(before->wait_us, after->wait_us);
    l->hold_us = delta(before->hold_us, after->hold_us);
}
