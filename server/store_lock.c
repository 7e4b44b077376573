/* store_lock.c -- the store lock (store.h): a short-held adaptive mutex,
 * handoff, and one condition per waiter, queued with a ticket in arrival
 * order; store.h's enum store_lock_order says in what order it goes
 * (bounded, fifo or unfair). store_lock spins briefly before it queues
 * (STORE_SPIN_PAUSES). It measures itself (STATS lock_*): every
 * acquisition's wait and hold, under the lock it measures;
 * store_lock_figures.c reads and clears those figures.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>
#include "lockmode.h"
#include "store.h"
#include "timeutil.h"
#include "trace.h"

/* handoff is held for a few dozen instructions, by every store_lock and
 * store_unlock: with a thread per connection, two CPUs meet on it all the
 * time. A plain mutex sleeps in the kernel when it finds it taken; glibc's
 * adaptive one spins a little first, which is all it ever needs. Under
 * many pipelining connections (--io threads) that spin turns most futex
 * sleeps into short waits and raises ADD's requests per second; with one
 * request in flight, or --io events, it changes nothing measurable
 * (docs/PERFORMANCE.md has the figures). */
static int handoff_init(pthread_mutex_t *m)
{
    pthread_mutexattr_t a;
    int rc = pthread_mutexattr_init(&a);

    if (rc)
        return rc;
#ifdef __GLIBC__
    rc = pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
    if (!rc)
        rc = pthread_mutex_init(m, &a);
    pthread_mutexattr_destroy(&a);
    return rc;
}

int store_lock_init(struct store *st)
{
    int rc = handoff_init(&st->handoff);
    if (rc)
        return -rc;
    atomic_init(&st->held, 0);
    atomic_init(&st->queued, 0);
    st->order = STORE_LOCK_BOUNDED;
    st->tickets = st->woken = 0;
    st->pass_budget_ns = STORE_PASS_BUDGET_NS;
    st->pass_for = st->passed_ns = 0;
    st->first = st->last = NULL;
    atomic_init(&st->owner, 0);
    st->stats.acquisitions = st->stats.contended = 0;
    hist_init(&st->stats.wait);
    hist_init(&st->stats.hold);
    return 0;
}

void store_lock_destroy(struct store *st)
{
    pthread_mutex_destroy(&st->handoff);
}

/* held and queued are only written under handoff, which orders them for
 * every reader that holds it; relaxed atomics are enough. They are atomic
 * for the spin in store_lock, which reads them without handoff. */
static int is_held(const struct store *st)
{
    return atomic_load_explicit(&st->held, memory_order_relaxed);
}

static void set_held(struct store *st, int held)
{
    atomic_store_explicit(&st->held, held, memory_order_relaxed);
}

static void set_queued(struct store *st, int change)
{
    unsigned n = atomic_load_explicit(&st->queued, memory_order_relaxed);
    atomic_store_explicit(&st->queued, n + (unsigned)change,
                          memory_order_relaxed);
}

/* Puts w at the tail of the queue, with the next ticket; handoff held. */
static void enqueue(struct store *st, struct store_waiter *w)
{
    w->granted = 0;
    w->ticket = ++st->tickets;
    w->next = NULL;
    if (st->last)
        st->last->next = w;
    else
        st->first = w;
    st->last = w;
    set_queued(st, +1);
}

/* Puts w, which keeps its ticket, back at the head; handoff held. */
static void enqueue_front(struct store *st, struct store_waiter *w)
{
    w->granted = 0;
    w->next = st->first;
    st->first = w;
    if (!st->last)
        st->last = w;
    set_queued(st, +1);
}

/* Queues behind the threads already waiting and sleeps until woken;
 * handoff held on entry and on return. Returns 0 once this thread may take
 * the lock, or -errno (a failed wait leaves w queued: the lock is broken).
 * fifo: store_unlock hands the lock over (held stays 1), so a grant is the
 * lock. bounded and unfair: store_unlock frees it and wakes the first
 * waiter, which takes it only if nobody took it first; one that lost it
 * goes back to the head of the queue, the next to be woken. A thread that
 * releases the lock and asks again at once thus keeps it without a
 * context switch, where the FIFO lock would switch to the waiter every
 * time: the convoy docs/PERFORMANCE.md measures. In the bounded order
 * only until the waiter's budget is spent (may_pass), and store_unlock
 * wakes nobody while a woken waiter has not run yet (st->woken): it will
 * try. */
static int wait_queued(struct store *st)
{
    struct store_waiter w = { .notify = NULL };
    int rc = pthread_cond_init(&w.wake, NULL);

    if (rc)
        return -rc;
    enqueue(st, &w);
    for (;;) {
        while (!w.granted && rc == 0)
            rc = pthread_cond_wait(&w.wake, &st->handoff);
        if (st->woken == w.ticket)
            st->woken = 0;              /* running: the next may be woken */
        if (rc || st->order == STORE_LOCK_FIFO || !is_held(st))
            break;
        enqueue_front(st, &w);
    }
    pthread_cond_destroy(&w.wake);
    return -rc;
}

/* --trace's spans of the lock, out of line: with tracing off the hot
 * path pays one test of trace_on. conn: an event loop's connection took
 * the lock (store_lock_nowait, _adopt), whose wait and hold are not its
 * thread's (trace.h). conn_hold is kept by count_acquired whether tracing
 * or not: a window may start (TRACE START) during a hold. */
static __attribute__((noinline, cold)) void
trace_acquired(struct store *st, uint64_t asked, int conn)
{
    uint64_t now = st->stats.acquired_at;   /* asked when uncontended */

    if (now != asked)
        trace_record(conn ? TRACE_CONN_LOCK_WAIT : TRACE_LOCK_WAIT, asked,
                     now, 0);
}

static __attribute__((noinline, cold)) void
trace_released(const struct store *st, uint64_t now)
{
    trace_record(st->stats.conn_hold ? TRACE_CONN_LOCK_HOLD : TRACE_LOCK_HOLD,
                 st->stats.acquired_at, now, 0);
}

/* Counts one acquisition; the caller has just got the lock (conn: for an
 * event loop's connection). Two clock reads per acquisition and release
 * at most, one when uncontended. */
static void count_acquired(struct store *st, uint64_t asked, int contended,
                           int conn)
{
    struct store_lock_stats *s = &st->stats;
    uint64_t now = contended ? time_now_ns() : asked;

    /* Relaxed stores: /metrics reads these without the lock. */
    __atomic_store_n(&s->acquisitions, s->acquisitions + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&s->contended, s->contended + (uint64_t)contended,
                     __ATOMIC_RELAXED);
    hist_record_relaxed(&s->wait, now - asked);
    s->acquired_at = now;
    s->conn_hold = conn;        /* beside acquired_at: a store, no branch */
}

/* How long store_lock spins before it queues: STORE_SPIN_PAUSES pause
 * instructions, each followed by a look at held: about 20 us where a
 * pause takes about 19 ns.
 * Queueing costs the waiter a futex wait and a context switch, the
 * releaser a futex wake, and, worse, it keeps held at 1 through the
 * hand-over until the woken thread runs, so the next asker finds it held
 * too and queues (a convoy). The bound is set by the holds it waits for: a
 * batch of up to --batch requests is held for tens of microseconds with
 * the event driver. A spin of a fifth of this caught too few releases to
 * change anything measurable; this one raises --io events' pipelined
 * requests per second and lowers their CPU per request
 * (docs/PERFORMANCE.md).
 * A spin that outlasts the hold, or that waits behind a queue, only burns
 * a CPU the holder or a client could use: hence the bound, and the stop
 * as soon as anyone queues. */
#define STORE_SPIN_PAUSES 1000

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* Waits, without handoff, until the lock looks free or someone queues for
 * it, at most STORE_SPIN_PAUSES pauses. Only a hint: the caller re-checks
 * under handoff. The FIFO lock's spin stops once a waiter is queued
 * because the lock then goes to that waiter, never to a spinner: held
 * stays 1 until the queue is empty. The others' goes on: the spinner may
 * take the lock ahead of the queue. The order is set before any session. */
static void spin_until_free(const struct store *st)
{
    for (int i = 0; i < STORE_SPIN_PAUSES; i++) {
        if (!is_held(st) || (st->order == STORE_LOCK_FIFO &&
            atomic_load_explicit(&st->queued, memory_order_relaxed)))
            return;
        cpu_relax();
    }
}

/* ---- the bounded order ----------------------------------------------- */

/* The oldest waiter's ticket, 0 when none; handoff held. */
static uint64_t oldest_waiter(const struct store *st)
{
    return st->woken ? st->woken : st->first ? st->first->ticket : 0;
}

/* Whether a thread may take the lock, found free, ahead of the waiters:
 * only while the holds since the oldest waiter queued, by every thread
 * and the one in progress then included, add up to less than
 * st->pass_budget_ns (note_released sums them; not the holds that end
 * while that waiter is woken and has not run yet). Once they reach it the
 * lock waits for that waiter, however long it takes to run; the next
 * oldest then starts a budget of its own. So the oldest waiter waits
 * for at most the budget of others' holding plus one hold, and each one
 * behind it for as much again per waiter ahead. One DIGEST of 10^6 people
 * (130 ms) spends a budget alone: a FIND waits for one DIGEST, as with
 * the FIFO lock (docs/LIMITS.md). Threads that ask again at once keep the
 * lock without a context switch for the rest of it.
 * Why a total and 100 us (measured with ssn-bench -c 50 -P 16, FIND,
 * against --io threads buffered on two CPUs): a bound per thread (each
 * other thread takes the lock at most K times while one waits) made every
 * thread queue in turn, a context switch per request, and ran at a fifth
 * to four fifths of no bound at all; this budget runs as fast as no
 * bound, and a larger one gains nothing. A budget of waiting time instead
 * convoyed: on 2 CPUs with 50 threads a woken thread often waits longer
 * than any such budget to run, so every waiter soon looked starved.
 * handoff held. */
static int may_pass(const struct store *st)
{
    uint64_t oldest = oldest_waiter(st);

    return !oldest || oldest != st->pass_for ||
           st->passed_ns < st->pass_budget_ns;
}

/* A hold of held_ns has just ended: it counts against the oldest waiter's
 * budget, which starts afresh when the oldest waiter changes. Every order
 * keeps the sum; only the bounded one reads it. handoff held.
 *
 * A hold that ends while the oldest waiter has been woken and has not run
 * yet (st->woken) does not count: that waiter could not have taken the
 * lock then. Counting it left the lock idle once the budget was spent,
 * until the scheduler ran the woken thread, which with SCHED_BATCH session
 * threads (no wake-up preemption) took milliseconds while every other
 * thread queued behind it: a convoy (docs/PERFORMANCE.md, "The store
 * lock", has the pairs: inserts at P16 with a thread per connection ran
 * faster, the longest waits grew). A waiter that runs and finds the lock
 * held goes back to the head of the queue (wait_queued), and the hold it
 * lost to counts. */
static void note_released(struct store *st, uint64_t held_ns)
{
    uint64_t oldest = oldest_waiter(st);

    if (oldest != st->pass_for) {
        st->pass_for = oldest;
        st->passed_ns = 0;
    }
    if (!st->woken)
        st->passed_ns += held_ns;
}

/* Whether a thread that asks now must queue; handoff held. */
static int must_queue(const struct store *st)
{
    if (is_held(st))
        return 1;
    switch (st->order) {
    case STORE_LOCK_FIFO:
        return st->first != NULL;
    case STORE_LOCK_BOUNDED:
        return !may_pass(st);
    default:
        return 0;
    }
}

int store_lock(struct store *st)
{
    uint64_t asked = time_now_ns();
    int contended = 0;
    int rc;

    /* Found held: contended, whether the spin gets it or the queue does;
     * its wait is recorded either way (count_acquired). */
    if (is_held(st)) {
        contended = 1;
        spin_until_free(st);
    }
    rc = pthread_mutex_lock(&st->handoff);
    if (rc)
        return -rc;
    if (must_queue(st)) {
        contended = 1;
        rc = wait_queued(st);
    }
    set_held(st, 1);
    pthread_mutex_unlock(&st->handoff);
    if (rc)
        return rc;
    count_acquired(st, asked, contended, 0);
    if (trace_enabled())
        trace_acquired(st, asked, 0);
    atomic_store_explicit(&st->owner, (unsigned long)pthread_self(),
                          memory_order_relaxed);
    return 0;
}

int store_unlock(struct store *st)
{
    uint64_t now = time_now_ns(), held_ns = now - st->stats.acquired_at;

    hist_record_relaxed(&st->stats.hold, held_ns);
    if (trace_enabled())
        trace_released(st, now);
    atomic_store_explicit(&st->owner, 0, memory_order_relaxed);
    int rc = pthread_mutex_lock(&st->handoff);
    if (rc)
        return -rc;
    note_released(st, held_ns);
    struct store_waiter *w = st->first;
    if (w && !w->notify && st->woken) {
        set_held(st, 0);                /* bounded: the woken one will try */
    } else if (w) {                     /* hand over: held stays 1 */
        st->first = w->next;
        if (!st->first)
            st->last = NULL;
        set_queued(st, -1);
        w->granted = 1;
        if (w->notify) {
            w->notify(w->arg);
        } else {
            /* FIFO: handed over; else free, whoever comes first */
            set_held(st, st->order == STORE_LOCK_FIFO);
            if (st->order == STORE_LOCK_BOUNDED)
                st->woken = w->ticket;
            rc = pthread_cond_signal(&w->wake);
        }
    } else {
        set_held(st, 0);
    }
    pthread_mutex_unlock(&st->handoff);
    return -rc;
}

void store_set_lock_order(struct store *st, enum store_lock_order order)
{
    st->order = order;
}

static const char *const order_names[] = {
    [STORE_LOCK_BOUNDED] = "bounded",
    [STORE_LOCK_FIFO] = "fifo",
    [STORE_LOCK_UNFAIR] = "unfair",
};

const char *store_lock_order_name(enum store_lock_order order)
{
    return order_names[order];
}

int store_lock_order_parse(const char *name)
{
    for (int o = STORE_LOCK_BOUNDED; o <= STORE_LOCK_UNFAIR; o++)
        if (strcmp(name, order_names[o]) == 0)
            return o;
    return -1;
}

/* Only the holder ever writes its own id into owner, so a thread reads its
 * own id there exactly when it holds the lock. */
int store_lock_owned(const struct store *st)
{
    return atomic_load_explicit(&st->owner, memory_order_relaxed) ==
           (unsigned long)pthread_self();
}

int store_lock_nowait(struct store *st, struct store_waiter *w)
{
    uint64_t asked = time_now_ns();
    int rc = pthread_mutex_lock(&st->handoff);

    if (rc)
        return -rc;
    if (must_queue(st)) {
        w->asked = asked;
        enqueue(st, w);
        pthread_mutex_unlock(&st->handoff);
        return -EAGAIN;
    }
    set_held(st, 1);
    pthread_mutex_unlock(&st->handoff);
    count_acquired(st, asked, 0, 1);
    if (trace_enabled())
        trace_acquired(st, asked, 1);
    atomic_store_explicit(&st->owner, (unsigned long)pthread_self(),
                          memory_order_relaxed);
    return 0;
}

void store_lock_adopt(struct store *st, struct store_waiter *w)
{
    count_acquired(st, w->asked, 1, 1);
    if (trace_enabled())
        trace_acquired(st, w->asked, 1);
    atomic_store_explicit(&st->owner, (unsigned long)pthread_self(),
                          memory_order_relaxed);
}

int store_lock_cancel(struct store *st, struct store_waiter *w)
{
    struct store_waiter **p;
    int granted;

    pthread_mutex_lock(&st->handoff);
    granted = w->granted;
    for (p = &st->first; !granted && *p; p = &(*p)->next) {
        if (*p != w)
            continue;
        *p = w->next;
        set_queued(st, -1);
        if (st->last == w) {            /* find the new last */
            struct store_waiter *q = st->first;
            while (q && q->next)
                q = q->next;
            st->last = q;
        }
        break;
    }
    pthread_mutex_unlock(&st->handoff);
    return granted;
}
