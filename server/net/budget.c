/* budget.c -- the reply memory of all clients together (budget.h).
 * budget_lock lets one thread at a time look for clients to drop (the
 * others go on: that one drops enough for all); it is taken before
 * conns_lock, and neither is ever held with the store lock. */
#include <pthread.h>
#include <unistd.h>
#include "budget.h"
#include "lockmode.h"

static pthread_mutex_t budget_lock = PTHREAD_MUTEX_INITIALIZER;

size_t budget_default(size_t max_output)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t share = pages > 0 && page > 0
                   ? (size_t)pages * (size_t)page / SSN_OUTPUT_TOTAL_SHARE
                   : (size_t)1 << 30;

    return share > 2 * max_output ? share : 2 * max_output;
}

/* The registered client that holds the most and is not dropped yet, and
 * the bytes still held by those already dropped (on their way out).
 * conns_lock held. */
static struct conn *largest_locked(size_t *leaving)
{
    struct conn *big = NULL;
    size_t most = 0;

    *leaving = 0;
    for (struct conn *c = srv.conns; c; c = c->next) {
        size_t held = atomic_load(&c->held);
        if (atomic_load(&c->dropped) != CONN_KEPT)
            *leaving += held;
        else if (held > most) {
            most = held;
            big = c;
        }
    }
    return big;
}

/* Over the budget: drops the largest holders until what the others hold
 * fits. Each one dropped stops holding as soon as its thread sees the
 * shut-down socket. */
static void enforce(size_t limit)
{
    size_t leaving;

    if (pthread_mutex_trylock(&budget_lock))
        return;                         /* another thread is at it */
    pthread_mutex_lock(&srv.conns_lock);
    for (;;) {
        struct conn *big = largest_locked(&leaving);
        size_t total = atomic_load(&srv.reply_held);
        if (!big || total <= limit + leaving)
            break;
        conns_drop_locked(big, CONN_DROPPED_BUDGET);
    }
    pthread_mutex_unlock(&srv.conns_lock);
    pthread_mutex_unlock(&budget_lock);
}

void budget_charge(struct conn *c, size_t n)
{
    size_t limit = srv.opt.max_output_total;

    if (!c || !n)
        return;
    STORE_ASSERT_NOT_HELD(&srv.store);
    atomic_fetch_add(&c->held, n);
    size_t total = atomic_fetch_add(&srv.reply_held, n) + n;
    if (limit && total > limit)
        enforce(limit);
}

void budget_release(struct conn *c, size_t n)
{
    if (!c || !n)
        return;
    atomic_fetch_sub(&c->held, n);
    atomic_fetch_sub(&srv.reply_held, n);
}
