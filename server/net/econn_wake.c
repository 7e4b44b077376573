/* econn_wake.c -- what wakes an event-driven connection besides its socket
 * (econn.h): the timer that runs it on later, its turn granted by the
 * store (struct econn_park) and the journal's word (struct econn_jwait).
 * An idle connection holds none of them: each is made when first needed,
 * on c's worker's thread, before anything that may activate it from
 * another thread is registered, then kept until c is closed. What the
 * timer and the turn do is econn.c's (econn_on_more, econn_on_granted);
 * the journal's word is answered here: after the worker's commit
 * (econn_on_committed) or a round's end (econn_on_journal).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include "econn.h"

/* The store's hand-over, on another thread, with its handoff mutex held:
 * only wake this connection's worker. */
static void notify_granted(void *arg)
{
    struct econn *c = arg;
    event_active(c->park->granted, EV_READ, 0);
}

/* The journal's word, on another thread, with the journal's lock held:
 * only wake this connection's worker. */
static void notify_journal(void *arg)
{
    struct econn *c = arg;
    event_active(c->jw->ev, EV_READ, 0);
}

/* A zeroed struct of size bytes whose struct event * at ev_off is a new
 * fd-less event of c's base calling cb; NULL when either cannot be had. */
static void *side_new(struct econn *c, size_t size, size_t ev_off,
                      event_callback_fn cb)
{
    char *p = calloc(1, size);
    struct event **ev;

    if (!p)
        return NULL;
    ev = (struct event **)(p + ev_off);
    *ev = event_new(event_get_base(c->ev), -1, 0, cb, c);
    if (!*ev) {
        free(p);
        return NULL;
    }
    return p;
}

int econn_need_more(struct econn *c)
{
    if (!c->more)
        c->more = event_new(event_get_base(c->ev), -1, 0, econn_on_more, c);
    return c->more ? 0 : -ENOMEM;
}

int econn_need_park(struct econn *c)
{
    struct econn_park *p = c->park;

    if (!p && (p = side_new(c, sizeof(*p), offsetof(struct econn_park,
                                                     granted),
                            econn_on_granted))) {
        p->waiter.notify = notify_granted;
        p->waiter.arg = c;
        c->park = p;
    }
    return p ? 0 : -ENOMEM;
}

void econn_drop_park(struct econn *c)
{
    if (c->park) {
        event_free(c->park->granted);
        free(c->park);
        c->park = NULL;
    }
}

int econn_need_jwait(struct econn *c)
{
    struct econn_jwait *w = c->jw;

    if (!w && (w = side_new(c, sizeof(*w), offsetof(struct econn_jwait, ev),
                            econn_on_journal))) {
        w->jwaiter.notify = w->cwaiter.notify = notify_journal;
        w->jwaiter.arg = w->cwaiter.arg = c;
        c->jw = w;
    }
    return w ? 0 : -ENOMEM;
}

void econn_drop_wakes(struct econn *c, struct journal *j)
{
    econn_drop_park(c);
    if (c->jw) {
        if (j) {
            journal_wait_cancel(j, &c->jw->jwaiter);
            journal_wait_cancel(j, &c->jw->cwaiter);
        }
        event_free(c->jw->ev);
        free(c->jw);
        c->jw = NULL;
    }
    if (c->conn.wake)
        conns_set_wake(&c->conn, NULL); /* no drop activates it now */
    if (c->more) {
        event_free(c->more);
        c->more = NULL;
    }
}

/* ---- the journal's word -------------------------------------------------- */

void econn_on_journal(evutil_socket_t fd, short what, void *arg)
{
    struct econn *c = arg;
    (void)fd; (void)what;

    if (!econn_sending(c))
        return;
    if (events_batch(c->w)) {
        events_hold(c);                 /* its replies leave with the */
        return;                         /* others the round woke */
    }
    econn_settle(c, econn_input_left(c));
}

void econn_on_committed(struct econn *c)
{
    struct journal *j = srv.store.journal;

    if (!econn_sending(c))
        return;
    /* 0: durable, or never will be (settle closes c): no loop back. */
    if (journal_wait_async(j, &c->jw->jwaiter, c->hold_seq) == -EAGAIN)
        return;                         /* econn_on_journal comes back */
    econn_settle(c, econn_input_left(c));
}
