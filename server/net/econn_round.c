/* econn_round.c -- a worker's round (econn.h): the connections whose
 * requests came in one pass of the worker's loop are answered one after
 * the other under shared holds of the store lock (session_round), and
 * each one's replies sent once the hold that answered it is over.
 * With one request in flight on each of 50 connections, a pass finds
 * dozens readable: answered one by one, each took the lock alone and
 * walked the tree alone, one cache miss after another; in a round they
 * are a pipeline's batch, their walks side by side (store_prefetch.c).
 * Each session still gets its time slice, and its replies are sent as
 * serve() sends them (econn_settle) once the hold that answered them is
 * over, before the next one begins.
 */
#include <assert.h>
#include "econn.h"
#include "session.h"

struct round {
    struct econn *c[SESSION_ROUND_MAX];
    int more[SESSION_ROUND_MAX];
    int first, last;                /* [first, last): flushed, to settle */
    struct econn_batch *b;          /* NULL: each sends at once */
};

/* As serve() ends: the replies leave (or, with a batch, are copied to go
 * with the group's others), and c settles (it may be closed and freed). */
static void send_out(int i, int more, void *arg)
{
    struct round *r = arg;

    session_flush(r->c[i]->conn.session);
    if (!r->b) {
        econn_settle(r->c[i], more);
        return;
    }
    r->more[i] = more;
    r->last = i + 1;
}

/* A group's replies leave together, then each connection settles. */
static void group_out(void *arg)
{
    struct round *r = arg;

    if (!r->b)
        return;
    econn_batch_send(r->b);
    for (; r->first < r->last; r->first++)
        econn_settle(r->c[r->first], r->more[r->first]);
}

void econn_round_run(struct econn *list)
{
    struct round r;
    struct session *s[SESSION_ROUND_MAX];

    /* Out of the round first, all of them: only its own settle closes a
     * connection, and none may then be left on a list. */
    for (struct econn *k = list; k; k = k->round_next) {
        assert(!k->unread);
        k->round_pp = NULL;
    }
    r.b = list ? events_batch(list->w) : NULL;
    if (r.b)
        econn_batch_collect(r.b, 1);
    while (list) {
        int n = 0;
        while (list && n < SESSION_ROUND_MAX) {
            r.c[n] = list;
            list = list->round_next;
            r.c[n]->round_next = NULL;
            s[n] = r.c[n]->conn.session;
            n++;
        }
        r.first = r.last = 0;
        session_round(s, n, ECONN_SLICE_NS, send_out, group_out, &r);
    }
    if (r.b)
        econn_batch_collect(r.b, 0);
}
