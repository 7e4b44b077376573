/* bench_stats.h -- ssnserver's own store-lock figures around a run, for
 * the report's "lock:" line (bench.h, struct bench_server_lock): STATS read
 * on a connection of its own before and after the timed phase
 * (bench_stats.c). ssn dialect only.
 */
#ifndef SSN_CLIENT_BENCH_STATS_H
#define SSN_CLIENT_BENCH_STATS_H

#include <stddef.h>
#include <stdint.h>
#include "bench.h"
#include "bench_conn.h"

#define BENCH_STATS_MS 5000     /* one STATS conversation's time limit */

/* The STATS figures the report takes. */
struct bench_stats {
    char mode[16];
    uint64_t acquisitions, contended, wait_us, hold_us;
    int bad;                    /* one of those was no count */
};

/* Connects to p->host:p->port, sends AUTH when p->password is set, reads
 * STATS into s and says DONE. Returns 0, or -1 with the reason in err. */
int bench_stats_read(const struct bench_plan *p, struct bench_stats *s,
                     char *err, size_t errlen);

/* Whether STATS may be read while the run's connections are open: not in
 * coarse (each of them holds the store lock for its whole session) nor in
 * serial (each holds the one slot), where it would wait for them all. */
int bench_stats_while_connected(const struct bench_stats *s);

/* What changed from before to after, into l (known set); the after
 * read's own acquisition of the lock is not counted. */
void bench_stats_delta(const struct bench_stats *before,
                       const struct bench_stats *after, int preload_included,
                       struct bench_server_lock *l);

#endif
