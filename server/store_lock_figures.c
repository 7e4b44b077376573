/* store_lock_figures.c -- the store lock's own figures (STATS lock_*,
 * /metrics): what store_lock.c records on every acquisition and release,
 * summarized under the lock (store_lock_figures_locked), read without it
 * (store_lock_figures: relaxed loads, as the holders record), and cleared
 * by STATS RESET.
 */
#include <errno.h>
#include <stdlib.h>
#include "lockmode.h"
#include "store.h"

static void figures_from(const struct hist *wait, const struct hist *hold,
                         struct store_lock_figures *f)
{
    hist_summarize(wait, &f->wait);
    hist_summarize(hold, &f->hold);
    f->wait_us = f->wait.sum / 1000;
    f->hold_us = f->hold.sum / 1000;
    f->wait_max_us = f->wait.max / 1000;
    f->hold_max_us = f->hold.max / 1000;
    f->wait_p99_us = f->wait.p99 / 1000;
    f->hold_p99_us = f->hold.p99 / 1000;
}

void store_lock_figures_locked(const struct store *st,
                               struct store_lock_figures *f)
{
    const struct store_lock_stats *s = &st->stats;

    STORE_ASSERT_HELD(st);
    f->acquisitions = s->acquisitions;
    f->contended = s->contended;
    figures_from(&s->wait, &s->hold, f);
}

int store_lock_figures(const struct store *st, struct store_lock_figures *f)
{
    const struct store_lock_stats *s = &st->stats;
    struct hist *h = malloc(2 * sizeof(*h));    /* 30 KB, off the stack */

    if (!h)
        return -ENOMEM;
    hist_init(&h[0]);
    hist_init(&h[1]);
    f->acquisitions = __atomic_load_n(&s->acquisitions, __ATOMIC_RELAXED);
    f->contended = __atomic_load_n(&s->contended, __ATOMIC_RELAXED);
    hist_merge_relaxed(&h[0], &s->wait);
    hist_merge_relaxed(&h[1], &s->hold);
    figures_from(&h[0], &h[1], f);
    free(h);
    return 0;
}

/* The holder's own hold goes on: its start time is kept. Relaxed stores,
 * as the holder's records (store_lock_figures may be reading). */
void store_lock_reset_locked(struct store *st)
{
    STORE_ASSERT_HELD(st);
    __atomic_store_n(&st->stats.acquisitions, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&st->stats.contended, 0, __ATOMIC_RELAXED);
    hist_clear(&st->stats.wait);
    hist_clear(&st->stats.hold);
}
