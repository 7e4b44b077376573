/* preload.c -- deterministic extra people for kill_it --preload
 * (preload.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "gen.h"
#include "preload.h"
#include "proto.h"

void preload_entry(uint64_t i, struct person *e)
{
    uint64_t group = i / NAMES_NFIRST, ssn = (i * 7919u + 12345u) % 1000000000u;
    char suffix[16];
    int n = 0;

    /* group in base 26, lowest letter first, at least four letters */
    do {
        suffix[n++] = (char)('a' + group % 26);
        group /= 26;
    } while ((group > 0 || n < 4) && n < (int)sizeof(suffix) - 1);
    suffix[n] = '\0';

    memset(e, 0, sizeof(*e));
    snprintf(e->last, sizeof(e->last), "%s%s", PRELOAD_PREFIX, suffix);
    snprintf(e->first, sizeof(e->first), "%s", names_first[i % NAMES_NFIRST]);
    snprintf(e->ssn, sizeof(e->ssn), "%03u-%02u-%04u",
             (unsigned)(ssn / 1000000u) % 1000u, (unsigned)(ssn / 10000u % 100u),
             (unsigned)(ssn % 10000u));
    e->age = (int)(i % 100);
}

int preload_clashes(const struct namelist *nl)
{
    size_t plen = strlen(PRELOAD_PREFIX);
    for (size_t i = 0; i < nl->n; i++)
        if (strncmp(nl->name[i], PRELOAD_PREFIX, plen) == 0)
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
