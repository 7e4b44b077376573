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
#include "econn.h"
#include "session.h"

/* As serve() ends: the replies leave, c settles (and may be closed and
 * freed). */
static void send_out(int i, int more, void *arg)
{
    struct econn **c = arg;

    session_flush(c[i]->conn.session);
    econn_settle(c[i], more);
}

void econn_round_run(struct econn *list)
{
    struct econn *c[SESSION_ROUND_MAX];
    struct session *s[SESSION_ROUND_MAX];

    /* Out of the round first, all of them: only its own settle closes a
     * connection, and none may then be left on a list. */
    for (struct econn *k = list; k; k = k->round_next)
        k->round_pp = NULL;
    while (list) {
        int n = 0;
        while (list && n < SESSION_ROUND_MAX) {
            c[n] = list;
            list = list->round_next;
            c[n]->round_next = NULL;
            s[n] = c[n]->conn.session;
            n++;
        }
        session_round(s, n, ECONN_SLICE_NS, send_out, c);
    }
}
