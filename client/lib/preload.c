/* preload.c -- deterministic extra people for kill_it --preload
 * (preload.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "gen.h"
#include "preload.h"
#include "proto.h"

/* The parts of a preloaded last name: group's digits in base 26, lowest
 * first, each a surname, at least two of them, joined by PRELOAD_MARK. */
static const char *const parts[26] = {
    "Adams", "Baker", "Clark", "Davis", "Evans", "Foster", "Grant", "Hayes",
    "Irwin", "Jones", "Keller", "Lewis", "Moore", "Nash", "Owens", "Parker",
    "Quinn", "Reed", "Shaw", "Turner", "Upton", "Vance", "Walsh", "Xavier",
    "Young", "Zimmer",
};

void preload_entry(uint64_t i, struct person *e)
{
    uint64_t group = i / NAMES_NFIRST, ssn = (i * 7919u + 12345u) % 1000000000u;
    size_t len = 0;
    int n = 0;

    memset(e, 0, sizeof(*e));
    do {
        len += (size_t)snprintf(e->last + len, sizeof(e->last) - len, "%s%s",
                                n ? (char[]){ PRELOAD_MARK, '\0' } : "",
                                parts[group % 26]);
        group /= 26;
        n++;
    } while ((group > 0 || n < 2) && len < sizeof(e->last) - 1);
    snprintf(e->first, sizeof(e->first), "%s", names_first[i % NAMES_NFIRST]);
    snprintf(e->ssn, sizeof(e->ssn), "%03u-%02u-%04u",
             (unsigned)(ssn / 1000000u) % 1000u, (unsigned)(ssn / 10000u % 100u),
             (unsigned)(ssn % 10000u));
    e->age = (int)(i % 100);
}

int preload_clashes(const struct namelist *nl)
{
    for (size_t i = 0; i < nl->n; i++)
        if (strchr(nl->name[i], PRELOAD_MARK))
            return 1;
    return 0;
}

static ssize_t preload_next(void *arg, char *buf, size_t cap, int *cmd)
{
    struct preload_source *ps = arg;
    struct person e;

    if (ps->next == ps->n) {
        if (ps->done)
            return 0;
        ps->done = 1;
        *cmd = PROTO_QUIT;
        return snprintf(buf, cap, "DONE\n");
    }
    preload_entry(ps->next++, &e);
    *cmd = PROTO_ADD;
    int n = snprintf(buf, cap, "ADD %s %s %d %s\n", e.first, e.last, e.age,
                     e.ssn);
    return n > 0 && (size_t)n < cap ? n : -EINVAL;
}

void preload_source_init(struct pl_source *s, struct preload_source *ps,
                         uint64_t n)
{
    ps->next = 0;
    ps->n = n;
    ps->done = 0;
    s->next = preload_next;
    s->arg = ps;
    s->fd = -1;
}
