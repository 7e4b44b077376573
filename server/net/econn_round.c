/* econn_round.c -- a worker's round (econn.h): the connections whose
 * requests came in one pass of the worker's loop are answered one after
 * the other under shared holds of the store lock (commands.h,
 * cmd_round_begin), and their replies sent once the last hold is over.
 * With one request in flight on each of 50 connections, a pass finds
 * dozens readable: answered one by one, each took the lock alone and
 * walked the tree alone, one cache miss after another; in a round they
 * are a pipeline's batch, their walks side by side (store_prefetch.c).
 * Each session still gets its time slice, and its replies are sent as
 * serve() sends them (econn_settle) once the hold that answered them is
 * over, before the next one begins.
 */
#include "commands.h"
#include "econn.h"
#include "session.h"

#define ROUND_MAX 64            /* sessions one call of cmd_round_begin
                                   takes; more run in a next one */

/* As serve() ends: the replies leave, c settles (and may be closed and
 * freed). */
static void send_out(struct econn *c, struct session *s, int more)
{
    session_flush(s);
    econn_settle(c, more);
}

void econn_round_run(struct econn *list)
{
    struct econn *c[ROUND_MAX];
    struct session *s[ROUND_MAX];
    int more[ROUND_MAX];

    /* Out of the round first, all of them: only its own settle closes a
     * connection, and none may then be left on a list. */
    for (struct econn *k = list; k; k = k->round_next)
        k->in_round = 0;
    while (list) {
        int n = 0;
        while (list && n < ROUND_MAX) {
            c[n] = list;
            list = list->round_next;
            c[n]->round_next = NULL;
            s[n] = c[n]->conn.session;
            n++;
        }
        int sent = 0;
        cmd_round_begin(s, n);
        for (int i = 0; i < n; i++) {
            cmd_round_at(i);
            session_received_slice(s[i], 0, ECONN_SLICE_NS, &more[i]);
            if (!cmd_round_holding())   /* those answered need not wait
                                           for the next hold's */
                for (; sent <= i; sent++)
                    send_out(c[sent], s[sent], more[sent]);
        }
        cmd_round_end();
        for (; sent < n; sent++)
            send_out(c[sent], s[sent], more[sent]);
    }
}
