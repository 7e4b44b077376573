/* econn_batch.c -- a worker's socket calls in batches (econn.h), through
 * its io_uring (uring.h): the recv of every connection one poll found
 * readable, made together before the round answers them, and the replies
 * of a round's group, copied here as the sessions flush them and sent
 * together once the group's hold is over. At one request in flight on
 * 50 connections that is two io_uring_enter(2)s a poll instead of a
 * recv(2) and a send(2) a connection.
 *
 * A worker's batch is its thread's alone: no lock. A connection has at
 * most one reply run here (c->batched); anything else it sends first
 * sends that run (econn_batch_out), so bytes leave in order.
 */
#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "econn.h"
#include "log.h"
#include "server.h"
#include "session.h"
#include "uring.h"

#define BATCH_BYTES (32 * 1024)     /* a group's replies, copied */

struct econn_batch {
    struct uring *ring;
    int collecting;                 /* econn_batch_take copies replies */
    int n;
    struct econn *c[URING_BATCH];   /* NULL: sent already (batch_out) */
    size_t off[URING_BATCH], len[URING_BATCH];
    size_t used;
    char bytes[BATCH_BYTES];
};

struct econn_batch *econn_batch_new(void)
{
    static int told;
    struct econn_batch *b;
    int err = 0;
    struct uring *u = uring_new(&err);

    if (!u) {
        if (!told++)
            log_msg(LOG_LEVEL_INFO, "io_uring unavailable (%s): each read "
                    "and send is a system call of its own", strerror(-err));
        return NULL;
    }
    b = calloc(1, sizeof(*b));
    if (!b) {
        uring_free(u);
        return NULL;
    }
    b->ring = u;
    atomic_fetch_add(&srv.uring_workers, 1);
    return b;
}

void econn_batch_free(struct econn_batch *b)
{
    if (b)
        uring_free(b->ring);
    free(b);
}

/* Makes the calls queued on b's ring, counted for STATS when the ring
 * made them. */
static void run(struct econn_batch *b, int n, int32_t *res)
{
    int enters = uring_run(b->ring, res);

    if (!enters)
        return;                         /* made one by one */
    atomic_fetch_add_explicit(&srv.uring_calls, (unsigned long long)n,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&srv.uring_enters, (unsigned long long)enters,
                              memory_order_relaxed);
}

/* ---- reads ----------------------------------------------------------- */

/* The first URING_BATCH connections of the round still unread, queued
 * on the ring; how many. */
static int gather_reads(struct econn_batch *b, struct econn *list,
                        struct econn **c)
{
    int n = 0;

    for (; list && n < URING_BATCH; list = list->round_next) {
        size_t room;
        char *p;

        if (!list->unread)
            continue;
        p = session_recv_space(list->conn.session, &room);
        assert(p);                      /* borrowed by on_read */
        uring_recv(b->ring, list->conn.fd, p, room);
        c[n++] = list;
    }
    return n;
}

void econn_batch_recv(struct econn_batch *b, struct econn *const *round)
{
    struct econn *c[URING_BATCH];
    int32_t res[URING_BATCH];
    int n;

    while ((n = gather_reads(b, *round, c)) > 0) {
        run(b, n, res);
        for (int i = 0; i < n; i++) {
            c[i]->unread = 0;
            econn_received(c[i], res[i]);   /* may close and free c[i] */
        }
    }
}

/* ---- replies ----------------------------------------------------------- */

void econn_batch_collect(struct econn_batch *b, int on)
{
    assert(b->n == 0 && b->used == 0);
    b->collecting = on;
}

int econn_batch_take(struct econn *c, const void *data, size_t len)
{
    struct econn_batch *b = events_batch(c->w);

    if (!b || !b->collecting || c->batched || b->n == URING_BATCH ||
        len > BATCH_BYTES - b->used)
        return 0;
    memcpy(b->bytes + b->used, data, len);
    b->c[b->n] = c;
    b->off[b->n] = b->used;
    b->len[b->n] = len;
    b->used += len;
    c->batched = ++b->n;
    return 1;
}

/* What the socket did not take of entry i (res: what it did): queued in
 * c->q to go when it is writable; the session fails when it cannot. */
static void sent(struct econn_batch *b, int i, int32_t res)
{
    struct econn *c = b->c[i];
    size_t done = res > 0 ? (size_t)res : 0;
    int rc = 0;

    c->batched = 0;
    b->c[i] = NULL;
    if (res < 0 && res != -EAGAIN)
        rc = res;
    else if (done < b->len[i])
        rc = econn_queue_rest(c, b->bytes + b->off[i] + done,
                              b->len[i] - done);
    if (rc)
        session_send_failed(c->conn.session, rc);
}

void econn_batch_out(struct econn *c)
{
    struct econn_batch *b = events_batch(c->w);
    int i = c->batched - 1;
    int32_t res;

    if (i < 0)
        return;
    assert(b && b->c[i] == c);
    uring_send(b->ring, c->conn.fd, b->bytes + b->off[i], b->len[i]);
    run(b, 1, &res);
    sent(b, i, res);
}

void econn_batch_send(struct econn_batch *b)
{
    int32_t res[URING_BATCH];
    int at[URING_BATCH], n = 0;

    for (int i = 0; i < b->n; i++)
        if (b->c[i]) {
            uring_send(b->ring, b->c[i]->conn.fd, b->bytes + b->off[i],
                       b->len[i]);
            at[n++] = i;
        }
    run(b, n, res);
    for (int k = 0; k < n; k++)
        sent(b, at[k], res[k]);
    b->n = 0;
    b->used = 0;
}

/* ---- replies held for the journal ----------------------------------- */

/* The first URING_BATCH connections from list on whose held replies may
 * leave now (their record durable), their queues' heads queued on the
 * ring; how many. *next: where the next gathering begins. */
static int gather_held(struct econn_batch *b, struct econn *list,
                       struct econn **c, struct econn **next)
{
    struct journal *j = srv.store.journal;
    int n = 0;

    for (; list && n < URING_BATCH; list = list->held_next) {
        const void *p;
        size_t len;

        if (!econn_sending(list) || !list->hold_seq ||
            journal_durable(j, list->hold_seq) <= 0 ||
            !(p = outq_head(&list->q, &len)))
            continue;
        uring_send(b->ring, list->conn.fd, p, len);
        c[n++] = list;
    }
    *next = list;
    return n;
}

void econn_batch_held(struct econn_batch *b, struct econn *list)
{
    struct econn *c[URING_BATCH];
    int32_t res[URING_BATCH];
    int n;

    while (list && (n = gather_held(b, list, c, &list)) > 0) {
        run(b, n, res);
        for (int i = 0; i < n; i++)
            if (res[i] > 0)
                outq_advance(&c[i]->q, (size_t)res[i]);
    }
}

void econn_batch_forget(struct econn *c)
{
    struct econn_batch *b = events_batch(c->w);

    if (c->batched) {
        b->c[c->batched - 1] = NULL;    /* its bytes never leave */
        c->batched = 0;
    }
}

