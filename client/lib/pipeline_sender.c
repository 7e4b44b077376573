/* pipeline_sender.c -- the sending side of a pipelined session, in the
 * caller's thread: requests drawn from a source are gathered into batches,
 * their slots published in the ring (under pl.mu, pipeline_int.h) and the
 * bytes sent without waiting for replies. It owns requests and bytes_out.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include "net.h"
#include "pipeline.h"
#include "pipeline_int.h"
#include "proto.h"
#include "timeutil.h"

#define PL_LINE_MAX     (PROTO_MAX_LINE + 2)    /* request line + "\r\n" */
#define PL_BATCH_REQS   1024    /* requests per send, at most */

/* Waits for the source's fd to have input, bounded by abort and deadline.
 * Returns 0 when the source should be asked again, -1 to give up. */
static int source_wait(struct pl *p, const struct pl_source *src)
{
    for (;;) {
        if (atomic_load(&p->abort))
            return -1;
        if (p->deadline && time_now_ns() >= p->deadline) {
            pl_fail_errno(p, ETIMEDOUT, "reading requests");
            return -1;
        }
        int ev = net_wait(src->fd, POLLIN, NET_POLL_MS);
        if (ev > 0)
            return 0;
        if (ev < 0) {
            pl_fail_set(p, PL_ERR_SOURCE, "reading requests: %s",
                        strerror(-ev));
            return -1;
        }
    }
}

/* One batch of requests: their bytes and their kinds. */
struct batch {
    char *buf;                  /* PL_BATCH_BYTES */
    size_t len, nreq;
    int kinds[PL_BATCH_REQS];   /* enum proto_cmd of each request */
    int src_done;               /* the source has nothing more */
};

/* Fills b from the source: until it is full, the source ends or would
 * block with something gathered. Returns 0, or -1 to give up (the failure
 * is recorded, or the other side gave up). */
static int batch_fill(struct pl *p, struct pl_source *src, struct batch *b)
{
    b->len = b->nreq = 0;
    while (PL_BATCH_BYTES - b->len >= PL_LINE_MAX && b->nreq < PL_BATCH_REQS) {
        int cmd = PROTO_INVALID;
        ssize_t n = src->next(src->arg, b->buf + b->len, PL_LINE_MAX, &cmd);
        if (n > 0) {
            b->kinds[b->nreq++] = cmd;
            b->len += (size_t)n;
            if (cmd == PROTO_QUIT) {        /* the server closes after it */
                b->src_done = 1;
                return 0;
            }
        } else if (n == 0) {
            b->src_done = 1;
            return 0;
        } else if (n == -EAGAIN) {
            if (b->nreq > 0)
                return 0;                   /* send what we have first */
            if (source_wait(p, src) < 0)
                return -1;
        } else {
            pl_fail_set(p, PL_ERR_SOURCE, "reading requests: %s",
                        strerror((int)-n));
            return -1;
        }
    }
    return 0;
}

/* Waits for ring room for b's requests and publishes their slots. Slots
 * are published before the bytes leave, so a reply can never arrive for a
 * request the reader does not know about yet. */
static void batch_publish(struct pl *p, const struct batch *b)
{
    pthread_mutex_lock(&p->mu);
    while (p->head - p->tail + b->nreq > PL_MAX_INFLIGHT &&
           !atomic_load(&p->abort)) {
        struct timespec ts = time_mono_after_ns(NET_POLL_MS * TIME_NS_PER_MS);
        pthread_cond_timedwait(&p->space, &p->mu, &ts);
    }
    uint64_t now = time_now_ns();
    for (size_t i = 0; i < b->nreq; i++) {
        struct slot *s = &p->ring[(p->head + i) % PL_MAX_INFLIGHT];
        s->t_ns = now;
        s->cmd = b->kinds[i];
    }
    p->head += b->nreq;
    if (p->head - p->tail > p->r->inflight_max)
        p->r->inflight_max = p->head - p->tail;
    if (b->src_done)
        p->sender_done = 1;
    pthread_mutex_unlock(&p->mu);
}

void pl_sender_run(struct pl *p, struct pl_source *src, char *buf)
{
    struct batch b = { .buf = buf };

    while (!b.src_done && !atomic_load(&p->abort)) {
        if (batch_fill(p, src, &b) < 0)
            return;
        batch_publish(p, &b);
        if (b.nreq == 0 || atomic_load(&p->abort))
            continue;

        size_t sent = 0;
        int rc = net_send_all(p->fd, b.buf, b.len, p->deadline, &p->abort,
                              &sent);
        p->r->bytes_out += sent;
        if (rc) {
            pl_fail_errno(p, -rc, "sending requests");
            return;
        }
        p->r->requests += b.nreq;
        if (p->o->progress)
            atomic_fetch_add_explicit(&p->o->progress->sent, b.nreq,
                                      memory_order_relaxed);
    }
}
