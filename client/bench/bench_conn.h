/* bench_conn.h -- ssn-bench's workers: T threads, each with its own
 * libevent event_base and its share of the C connections, each connection
 * keeping up to P requests in flight (memtier_benchmark's shape). A run is
 * a series of phases (AUTH, preload, the timed run); connections stay open
 * from one to the next. The requests and replies themselves are the
 * dialect's (bench.h); this file only moves bytes and matches each reply to
 * the oldest request in flight on its connection.
 *
 * Threads: a worker's state belongs to its thread while a phase runs and
 * to the main thread between phases (pthread_create and pthread_join order
 * the two). Only `progress` and the shared `stop` flag are read across
 * threads while a phase runs; both are atomics.
 */
#ifndef SSN_CLIENT_BENCH_CONN_H
#define SSN_CLIENT_BENCH_CONN_H

#include <stdatomic.h>
#include <stdint.h>
#include "bench.h"

#define BENCH_CONNS_MAX     10000       /* most --connections */
#define BENCH_THREADS_MAX   256         /* most --threads */
#define BENCH_PIPELINE_MAX  4096        /* most --pipeline */
#define BENCH_INFLIGHT_MAX  1000000u    /* most connections x pipeline */
#define BENCH_HANG_S        10          /* default --hang */

enum bench_phase {
    BPH_AUTH,           /* one AUTH per connection; each must answer OK */
    BPH_PRELOAD,        /* ADD keys 0..preload-1, untimed */
    BPH_RUN,            /* the timed mix */
};

/* What the workers are to do: the options, resolved. */
struct bench_plan {
    const struct bench_dialect *dialect;
    const char *host, *port;
    unsigned conns, threads, pipeline;
    unsigned mix[BENCH_OPS];    /* ADD:FIND:DELETE weights, not all 0 */
    uint64_t keys;              /* keys 0..keys-1 */
    uint64_t preload;           /* keys 0..preload-1 added first */
    int new_keys;               /* BPH_RUN's ADDs take new keys
                                 * (bench_new_key), from max(keys,
                                 * preload) up, never one twice */
    uint64_t requests;          /* the timed phase's total; 0: --duration */
    uint64_t duration_ns;       /* the timed phase's length; 0: -n */
    uint64_t hang_ns;           /* a connection with requests in flight
                                 * and no whole reply this long fails the
                                 * run (--hang) */
    const char *password;       /* for BPH_AUTH */
};

struct bench_set;               /* every worker and connection of a run */

/* Connects p->conns connections (TCP_NODELAY, non-blocking) and makes the
 * workers. Returns the set, or NULL with a one-line reason in err. The
 * caller frees it with bench_set_free. */
struct bench_set *bench_set_new(const struct bench_plan *p, char *err,
                                size_t errlen);
void bench_set_free(struct bench_set *s);

/* Runs one phase on every worker thread and waits for it, calling tick
 * (may be NULL) about every 100 ms from the calling thread with the
 * replies so far and the time since the phase began. tick returns
 * non-zero to stop the phase early: requests in flight are still
 * answered. Returns 0, or -1 with a one-line reason in err (a connection
 * failed, the counts do not match). */
int bench_set_run(struct bench_set *s, enum bench_phase ph,
                  int (*tick)(void *arg, uint64_t replies,
                              uint64_t elapsed_ns),
                  void *arg, char *err, size_t errlen);

/* The last phase's counts, latencies (BPH_RUN only) and length: first
 * write to last reply. */
void bench_set_result(const struct bench_set *s, struct bench_result *r);

#endif
