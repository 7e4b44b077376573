/* bench_conn_int.h -- the insides of ssn-bench's workers, shared by
 * bench_conn.c (one connection's event callbacks) and bench_set.c (making
 * the connections, starting and joining the threads of a phase). Not for
 * anyone else: bench_conn.h is the interface.
 */
#ifndef SSN_CLIENT_BENCH_CONN_INT_H
#define SSN_CLIENT_BENCH_CONN_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <event2/event.h>
#include "bench.h"
#include "bench_conn.h"
#include "hist.h"

#define BENCH_RBUF      65536       /* bytes one read takes at most */
#define BENCH_PART_MAX  (2 * BENCH_REPLY_MAX)  /* a reply's first bytes kept
                                                * between reads */
#define BENCH_TICK_MS   50          /* the workers' timer: stop, deadline,
                                     * hang checks */
#define BENCH_LASTERR   64          /* bytes of a connection's last error */

/* One request in flight: what the reply to it must answer, and when it
 * was written. */
struct bench_req {
    uint64_t key;
    uint64_t t_ns;
    uint8_t op;                 /* enum bench_op */
};

struct bench_worker;

/* One connection. Belongs to its worker's thread during a phase. */
struct bench_conn {
    struct bench_worker *w;
    unsigned id;                /* 0..conns-1, for messages */
    int fd;
    struct event *rev, *wev;    /* read (always on), write (while blocked) */
    struct bench_req *ring;     /* requests in flight, a ring of pipeline */
    unsigned head, count;       /* the oldest one, and how many */
    char *out;                  /* requests built, not yet written */
    size_t olen, opos, ocap;    /* bytes in out, bytes written, capacity */
    char *part;                 /* the start of a reply cut by a read */
    size_t plen;                /* its bytes (part is NULL until needed) */
    uint64_t sent;              /* requests sent this phase */
    uint64_t last_rx_ns;        /* last reply, or first request after idle */
    int done;                   /* nothing in flight, nothing more to send */
    char last_err[BENCH_LASTERR];   /* the last BK_ERROR reply, for the
                                     * message when the server hangs up */
};

/* One thread: its event loop, connections and counts. */
struct bench_worker {
    struct bench_set *set;
    const struct bench_plan *p;
    unsigned id;
    struct event_base *base;
    struct event *tick;
    struct bench_conn *conns;
    unsigned nconns;
    unsigned active;            /* connections not done this phase */
    enum bench_phase phase;
    int stopping;               /* send nothing more; drain what is due */
    uint64_t budget;            /* requests left to send (BPH_RUN);
                                 * UINT64_MAX under --duration */
    uint64_t next_key, end_key; /* keys left to add (BPH_PRELOAD) */
    uint64_t new_keys;          /* new keys this worker drew (--new-keys):
                                 * its i-th is number i * nw + id */
    uint64_t deadline_ns;       /* BPH_RUN under --duration; else 0 */
    uint64_t rng;               /* xorshift64* state */
    unsigned mix_total;
    struct bench_counts counts;
    struct hist lat;            /* BPH_RUN only */
    uint64_t first_tx_ns;       /* when the phase began, on the main
                                 * thread, before the threads started */
    uint64_t last_rx_ns;        /* the phase's last reply */
    char *rbuf;                 /* BENCH_PART_MAX + BENCH_RBUF bytes */
    int failed;
    char fail[BENCH_ERR_MAX];
    char first_error[96];
    pthread_t tid;
    _Atomic uint64_t progress;  /* replies, for the main
                                 * thread's progress line */
};

struct bench_set {
    struct bench_plan p;
    struct bench_worker *w;
    unsigned nw;
    atomic_int drain;           /* stop sending, answer what is in flight */
    atomic_int abort;           /* a worker failed: everyone stops now */
    pthread_mutex_t lock;       /* guards running */
    pthread_cond_t finished;    /* signalled as running drops */
    unsigned running;           /* workers still in the phase */
};

/* Starts the phase on w's connections and runs its loop until every one
 * is done or the set aborts. The thread function of a phase. */
void *bench_worker_main(void *arg);

/* libevent callbacks of a connection and of a worker's timer. */
void bench_conn_read_cb(evutil_socket_t fd, short what, void *arg);
void bench_conn_write_cb(evutil_socket_t fd, short what, void *arg);
void bench_worker_tick_cb(evutil_socket_t fd, short what, void *arg);

#endif
