/* events.c -- the event-driven driver's workers (events.h), after
 * memcached's thread.c: N threads, each with its own event_base; the
 * listener (main thread) queues each accepted connection for one of them,
 * round robin, and wakes it with event_active.
 *
 * Each worker's lock guards its hand-over queue and its stopping flag; its
 * connections, their list and its pool of session buffers belong to its
 * thread alone.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include "bufpool.h"
#include "econn.h"
#include "events.h"
#include "outq.h"
#include "journal/journal.h"
#include "log.h"
#include "server.h"
#include "session.h"
#include "trace.h"

struct worker {
    pthread_t tid;
    struct event_base *base;
    struct event *wake;         /* activated by the listener and at stop */
    pthread_mutex_t lock;       /* guards handed and stopping */
    struct econn *handed;       /* connections to take over (via next) */
    int stopping;
    struct econn *conns;        /* live; the worker's thread only */
    struct event *commit;       /* the journal's round, after the pass */
    struct session_pool pool;   /* the buffers its sessions borrow while
                                   a request is in progress; its thread
                                   only */
    struct bufpool outq_pool;   /* its connections' small output segments
                                   (outq_use_pool); its thread only */
    struct econn *round;        /* read in this pass, to be answered
                                   together (econn_round.c), in order;
                                   its thread only */
    struct econn **round_tail;
    struct event *round_ev;     /* runs the round after the pass's reads */
    struct econn_batch *batch;  /* its batched socket calls, NULL: none
                                   (made by its thread); its thread only */
    struct econn *held;         /* replies waiting for commit_cb's round
                                   (events_hold, by held_next): never
                                   empty but while commit is active,
                                   which empties it; its thread only */
};

static struct worker *workers;
static int nworkers;
static int next_worker;         /* round robin; the listener's thread only */

void events_forget(struct econn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        c->w->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
}

static void take_over(struct worker *w, struct econn *c)
{
    c->prev = NULL;
    c->next = w->conns;
    if (w->conns)
        w->conns->prev = c;
    w->conns = c;
    econn_begin(c, w->base);
}

/* New connections to take over, or the order to stop. */
static void wake_cb(evutil_socket_t fd, short what, void *arg)
{
    struct worker *w = arg;
    (void)fd; (void)what;

    pthread_mutex_lock(&w->lock);
    struct econn *list = w->handed;
    int stopping = w->stopping;
    w->handed = NULL;
    pthread_mutex_unlock(&w->lock);
    while (list) {
        struct econn *c = list;
        list = c->next;
        take_over(w, c);
    }
    if (stopping) {
        while (w->conns)
            econn_close(w->conns);
        event_base_loopbreak(w->base);
    }
}

void events_round_add(struct econn *c)
{
    struct worker *w = c->w;

    if (!w->round) {
        w->round_tail = &w->round;
        /* One priority for every event, and libevent runs the active
         * ones in the order they became so, those made active meanwhile
         * too: the round runs in this pass, after the reads the poll
         * found, before the next poll. */
        event_active(w->round_ev, EV_READ, 0);
    }
    c->round_next = NULL;
    c->round_pp = w->round_tail;
    *w->round_tail = c;
    w->round_tail = &c->round_next;
}

/* c out of the round it waits in, in constant time: closing a pass's
 * connections one by one costs no walk along the others. A round under
 * way has taken its own off first (econn_round_run). */
void events_round_forget(struct econn *c)
{
    struct worker *w = c->w;

    if (!c->round_pp)
        return;
    assert(*c->round_pp == c);
    *c->round_pp = c->round_next;
    if (c->round_next)
        c->round_next->round_pp = c->round_pp;
    else
        w->round_tail = c->round_pp;
    c->round_pp = NULL;
}

static void round_cb(evutil_socket_t fd, short what, void *arg)
{
    struct worker *w = arg;
    struct econn *list = w->round;
    (void)fd; (void)what;

    if (w->batch) {                     /* the pass's reads first, together */
        econn_batch_recv(w->batch, &w->round);
        list = w->round;
    }
    w->round = NULL;
    if (list)
        econn_round_run(list);
}

void events_hold(struct econn *c)
{
    struct worker *w = c->w;

    if (c->held_pp)
        return;
    if (!w->held)                       /* the pass's first: the commit */
        event_active(w->commit, EV_READ, 0);
    c->held_next = w->held;
    if (w->held)
        w->held->held_pp = &c->held_next;
    w->held = c;
    c->held_pp = &w->held;
}

void events_hold_forget(struct econn *c)
{
    if (!c->held_pp)
        return;
    assert(*c->held_pp == c);
    *c->held_pp = c->held_next;
    if (c->held_next)
        c->held_next->held_pp = c->held_pp;
    c->held_pp = NULL;
}

/* Group commit once the pass is over (Redis's beforeSleep): made active
 * by the first reply held for the journal, so after the pass's reads and
 * the round that answered them, the worker asks for the records its
 * waiting replies need (journal_commit): the flusher writes and syncs them
 * in one round with --fsync always, with the other worker's records
 * appended meanwhile, and the worker writes them itself with everysec and
 * no. Then each held connection (events_hold) sends its replies if its
 * record is durable, as it is when this worker wrote the round, with no
 * lock taken, or else waits with the journal, whose round's end wakes it
 * (journal_wait_async's notify). A lower priority for the commit would
 * cost each pass two polls more: one connection paid 6 system calls a
 * request against 4 (perf stat, 2026-11-26; test-journal-events.sh
 * case_one_poll_a_request). */
static void commit_cb(evutil_socket_t fd, short what, void *arg)
{
    struct worker *w = arg;
    uint64_t seq = 0;
    (void)fd; (void)what;

    for (struct econn *c = w->held; c; c = c->held_next)
        if (c->hold_seq > seq)
            seq = c->hold_seq;          /* the last record one needs */
    if (seq && srv.store.journal)
        journal_commit(srv.store.journal, seq);
    if (w->batch)                       /* what that made durable leaves */
        econn_batch_held(w->batch, w->held);    /* together */
    for (struct econn *c; (c = w->held); ) {
        events_hold_forget(c);
        econn_on_committed(c);          /* may close and free c */
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;

    srv_on_event_loop = 1;
    outq_use_pool(&w->outq_pool);
    if (srv.opt.uring)
        w->batch = econn_batch_new();   /* the ring is its thread's */
    if (trace_configured()) {          /* a window may start later */
        char name[32];
        snprintf(name, sizeof(name), "worker %d", (int)(w - workers) + 1);
        trace_thread_name(name);
    }
    event_base_loop(w->base, EVLOOP_NO_EXIT_ON_EMPTY);
    outq_use_pool(NULL);                /* its connections are closed */
    econn_batch_free(w->batch);
    w->batch = NULL;
    return NULL;
}

static int worker_init(struct worker *w)
{
    int rc = pthread_mutex_init(&w->lock, NULL);
    if (rc)
        return -rc;
    session_pool_init(&w->pool, SESSION_POOL_SPARE);
    bufpool_init(&w->outq_pool, OUTQ_SEG_SMALL, BUFPOOL_MAX_SPARE);
    w->base = event_base_new();
    if (!w->base)
        return -ENOMEM;
    w->commit = event_new(w->base, -1, 0, commit_cb, w);
    if (!w->commit)
        return -ENOMEM;
    w->round_ev = event_new(w->base, -1, 0, round_cb, w);
    if (!w->round_ev)
        return -ENOMEM;
    w->wake = event_new(w->base, -1, EV_PERSIST, wake_cb, w);
    if (!w->wake || event_add(w->wake, NULL))
        return -ENOMEM;
    rc = pthread_create(&w->tid, NULL, worker_main, w);
    return -rc;
}

int events_init(int n)
{
    workers = calloc((size_t)n, sizeof(*workers));
    if (!workers)
        return -ENOMEM;
    for (int i = 0; i < n; i++) {
        int rc = worker_init(&workers[i]);
        if (rc)
            return rc;
        nworkers++;
    }
    return 0;
}

struct econn_batch *events_batch(struct worker *w)
{
    return w->batch;
}

struct session_pool *events_pool(struct worker *w)
{
    return &w->pool;
}

int events_start(int fd, const char *peer)
{
    struct worker *w = &workers[next_worker];
    struct econn *c = econn_new(w, fd, peer);

    if (!c)
        return -ENOMEM;
    session_set_pool(c->conn.session, &w->pool);    /* used on w's thread:
                                                       the hand-over below
                                                       orders it */
    next_worker = (next_worker + 1) % nworkers;
    pthread_mutex_lock(&w->lock);
    c->next = w->handed;
    w->handed = c;
    pthread_mutex_unlock(&w->lock);
    event_active(w->wake, EV_READ, 0);
    return 0;
}

int events_stop(long ms)
{
    struct timespec deadline;

    clock_gettime(CLOCK_REALTIME, &deadline);   /* pthread_timedjoin_np's */
    deadline.tv_sec += ms / 1000;
    deadline.tv_nsec += (ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    for (int i = 0; i < nworkers; i++) {
        struct worker *w = &workers[i];
        pthread_mutex_lock(&w->lock);
        w->stopping = 1;
        pthread_mutex_unlock(&w->lock);
        event_active(w->wake, EV_READ, 0);
    }
    for (int i = 0; i < nworkers; i++)
        if (pthread_timedjoin_np(workers[i].tid, NULL, &deadline))
            return -ETIMEDOUT;
    for (int i = 0; i < nworkers; i++) {
        event_free(workers[i].wake);
        event_free(workers[i].commit);
        event_free(workers[i].round_ev);
        event_base_free(workers[i].base);
        session_pool_destroy(&workers[i].pool);
        bufpool_destroy(&workers[i].outq_pool);
        pthread_mutex_destroy(&workers[i].lock);
    }
    free(workers);
    workers = NULL;
    nworkers = 0;
    return 0;
}
