/* journal_wait.c -- waiting for the journal (journal.h): a session's
 * blocking wait, which leads a round itself when none is under way (group
 * commit without a hand-off) and otherwise sleeps, woken by broadcast or by
 * a signal of its own (--journal-wake); and an event loop's wait that does
 * not block (journal_wait_async), whose connections the end of a round
 * wakes. The rounds themselves are journal.c's; the state, under j->lock,
 * is journal_int.h's struct journal.
 */
#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include "hist.h"
#include "journal.h"
#include "journal_int.h"
#include "lockmode.h"
#include "server.h"
#include "timeutil.h"

/* ---- an event loop's connections -------------------------------------- */

/* Two lists of them, each unordered and under j->lock: j->waiters wait
 * for a record to be durable (journal_wait_async), j->compact_waiters for
 * a compaction to end (journal_compact_wait_async). w->list says which
 * one w is on, NULL when none; a waiter queued again stays where it is,
 * with the new seq. */
void journal_waiter_queue_locked(struct journal_waiter **list,
                                 struct journal_waiter *w, uint64_t seq)
{
    w->seq = seq;
    if (w->list)
        return;                 /* queued already: waits for seq now */
    w->prev = NULL;
    w->next = *list;
    if (*list)
        (*list)->prev = w;
    *list = w;
    w->list = list;
}

static void unqueue_locked(struct journal_waiter *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        *w->list = w->next;
    if (w->next)
        w->next->prev = w->prev;
    w->prev = w->next = NULL;
    w->list = NULL;
}

void journal_waiters_notify_locked(struct journal_waiter **list,
                                   uint64_t upto, int all)
{
    struct journal_waiter *w = *list, *next;

    for (; w; w = next) {
        next = w->next;
        if (w->seq <= upto || all) {
            unqueue_locked(w);
            w->notify(w->arg);
        }
    }
}

/* The event loops' connections whose records are now durable, or never
 * will be; j->lock held. */
void journal_notify_waiters_locked(struct journal *j)
{
    journal_waiters_notify_locked(&j->waiters, atomic_load(&j->durable_seq),
                                  j->broken != 0);
}

/* ---- waiting ---------------------------------------------------------- */

void journal_wake_locked(struct journal *j)
{
    uint64_t durable = atomic_load(&j->durable_seq);
    struct journal_sleeper *next = NULL;

    j->published_ns = time_now_ns();
    /* The broadcast waiters, and appenders waiting for room or space;
     * without any, glibc returns without a system call. */
    pthread_cond_broadcast(&j->progress);
    /* Sleepers (JOURNAL_WAKE_SIGNAL) only: the first waiting for a record
     * this round did not cover leads the next round, so it is woken
     * first. */
    for (struct journal_sleeper **pp = &j->sleepers; *pp && !j->broken;
         pp = &(*pp)->next)
        if ((*pp)->seq > durable) {
            next = *pp;
            *pp = next->next;
            next->linked = 0;
            pthread_cond_signal(&next->cond);
            break;
        }
    for (struct journal_sleeper **pp = &j->sleepers; *pp; ) {
        struct journal_sleeper *sl = *pp;
        if (sl->seq <= durable || j->broken) {
            *pp = sl->next;
            sl->linked = 0;
            pthread_cond_signal(&sl->cond);
        } else {
            pp = &sl->next;
        }
    }
    /* Those left wait for records appended after this round took its
     * buffer: the round "next" leads covers them all. */
}

/* JOURNAL_WAKE_SIGNAL: sleeps once on a condition of its own until the
 * end of a round signals it (its record durable, or it is to lead the
 * next round); j->lock held. */
static void sleep_own_locked(struct journal *j, uint64_t seq)
{
    struct journal_sleeper me = {
        .seq = seq, .linked = 1, .next = j->sleepers,
    };

    pthread_cond_init(&me.cond, NULL);
    j->sleepers = &me;
    while (me.linked)
        pthread_cond_wait(&me.cond, &j->lock);
    pthread_cond_destroy(&me.cond);
}

/* One round led by a session in journal_wait, the flusher's steps with no
 * lock held while writing and syncing. Space reservation and everysec's
 * sync stay the flusher's (signalled here when due), so that a session
 * waits only for its records. j->lock held, j->flushing clear. */
static void lead_round_locked(struct journal *j)
{
    struct flush_round f;

    j->flushing = 1;
    journal_round_take_locked(j, &f);
    assert(!f.want_sync || !srv_on_event_loop); /* a worker never syncs */
    pthread_mutex_unlock(&j->lock);
    journal_round_io(j, &f);
    pthread_mutex_lock(&j->lock);
    journal_round_publish_locked(j, &f);
    j->flushing = 0;
    /* The flusher's turn: space to reserve, or records appended after
     * this round took its buffer that an event loop's connection
     * (journal_wait_async) or a thread session's held reply
     * (journal_reply_push) waits for. */
    if (f.do_reserve || j->want_reserve ||
        ((j->waiters || j->replies) && j->buf[j->active].len))
        pthread_cond_signal(&j->work);
    journal_replies_deliver_locked(j, f.replies);
    /* A failure of this round is logged by the flusher, which
     * journal_set_broken_locked woke: this session may hold the store
     * lock (coarse). */
}

/* Leads rounds while record seq is not durable and none is under way
 * (nor a compaction's switch, the flusher's). Returns 0 when seq is
 * durable, -EIO when it never will be, -EBUSY when a round under way is
 * to make it so; j->lock held. */
static int lead_while_idle_locked(struct journal *j, uint64_t seq)
{
    while (atomic_load(&j->durable_seq) < seq && !j->broken &&
           !j->flushing && j->compact_state != JCOMPACT_READY)
        lead_round_locked(j);
    return atomic_load(&j->durable_seq) >= seq ? 0 : j->broken ? -EIO
                                                               : -EBUSY;
}

/* Group commit without a hand-off: a session whose record is not durable
 * leads a round itself when none is under way (the flusher's thread would
 * cost two wake-ups per round), else sleeps until the round under way
 * ends; the round after it covers every record appended meanwhile. */
int journal_wait(struct journal *j, uint64_t seq)
{
    int rc;

    SRV_ASSERT_MAY_BLOCK();
    STORE_ASSERT_NOT_HELD(j->store);
    if (atomic_load(&j->durable_seq) >= seq)
        return 0;
    pthread_mutex_lock(&j->lock);
    while ((rc = lead_while_idle_locked(j, seq)) == -EBUSY) {
        if (!j->flushing)       /* a compaction's switch: the flusher's */
            pthread_cond_signal(&j->work);
        if (j->wake == JOURNAL_WAKE_SIGNAL)
            sleep_own_locked(j, seq);
        else
            pthread_cond_wait(&j->progress, &j->lock);
        /* The wake-up's cost: from the end of the round that let this
         * waiter go to the waiter holding j->lock again. */
        if (atomic_load(&j->durable_seq) >= seq) {
            j->wakes++;
            hist_record(&j->wake_ns, time_now_ns() - j->published_ns);
        }
    }
    pthread_mutex_unlock(&j->lock);
    return rc;
}

int journal_lead(struct journal *j, uint64_t seq)
{
    int rc;

    SRV_ASSERT_MAY_BLOCK();
    STORE_ASSERT_NOT_HELD(j->store);
    if (atomic_load(&j->durable_seq) >= seq)
        return 0;
    pthread_mutex_lock(&j->lock);
    rc = lead_while_idle_locked(j, seq);
    pthread_mutex_unlock(&j->lock);
    return rc;
}

void journal_help(struct journal *j)
{
    if (!atomic_load_explicit(&j->replies_queued, memory_order_relaxed))
        return;
    SRV_ASSERT_MAY_BLOCK();             /* its rounds write, sync and send */
    STORE_ASSERT_NOT_HELD(j->store);
    pthread_mutex_lock(&j->lock);
    for (int n = 0; n < JOURNAL_HELP_ROUNDS && j->replies &&
         j->buf[j->active].len && !j->broken && !j->flushing &&
         j->compact_state != JCOMPACT_READY; n++)
        lead_round_locked(j);
    pthread_mutex_unlock(&j->lock);
}

/* An event loop's pass is over. With --fsync always the flusher leads
 * the round: a worker never waits for a sync, its other connections go on
 * being answered meanwhile. With everysec or no a round is a pwrite into
 * the page cache and nothing more (everysec's sync is the flusher's, a
 * second later): the worker writes it itself when none is under way, as
 * Redis's beforeSleep writes its AOF buffer, and spares the flusher's two
 * wake-ups a pass. When a round is under way already, its end starts the
 * next (the flusher loops while records are buffered; a session or worker
 * that led it signals the flusher). */
void journal_commit(struct journal *j, uint64_t seq)
{
    if (atomic_load(&j->durable_seq) >= seq)
        return;
    STORE_ASSERT_NOT_HELD(j->store);
    pthread_mutex_lock(&j->lock);
    if (j->fsync != JOURNAL_FSYNC_ALWAYS && !j->stopping)
        (void)lead_while_idle_locked(j, seq);
    if (atomic_load(&j->durable_seq) < seq && !j->broken && !j->flushing)
        pthread_cond_signal(&j->work);
    pthread_mutex_unlock(&j->lock);
}

void journal_set_wake(struct journal *j, enum journal_wake w)
{
    pthread_mutex_lock(&j->lock);
    j->wake = w;
    pthread_mutex_unlock(&j->lock);
}

int journal_wait_async(struct journal *j, struct journal_waiter *w,
                       uint64_t seq)
{
    int rc = 0;

    if (atomic_load(&j->durable_seq) >= seq)
        return 0;
    pthread_mutex_lock(&j->lock);
    if (atomic_load(&j->durable_seq) < seq && !j->broken) {
        journal_waiter_queue_locked(&j->waiters, w, seq);
        j->async_waits++;
        rc = -EAGAIN;
        /* The event loop asks for the round once its pass ends
         * (journal_commit); the flusher's 100 ms tick is the backstop. */
    }
    pthread_mutex_unlock(&j->lock);
    return rc;
}

void journal_wait_cancel(struct journal *j, struct journal_waiter *w)
{
    pthread_mutex_lock(&j->lock);
    if (w->list)
        unqueue_locked(w);
    pthread_mutex_unlock(&j->lock);
}

/* No lock: both facts only move one way (durable_seq grows, broken is
 * never cleared), so "not yet" was true when durable_seq was read, and a
 * caller that then waits asks again under j->lock (journal_wait_async). */
int journal_durable(struct journal *j, uint64_t seq)
{
    if (atomic_load(&j->durable_seq) >= seq)
        return 1;
    return atomic_load(&j->broken) ? -EIO : 0;
}
