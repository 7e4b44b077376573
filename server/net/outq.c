/* outq.c -- the pending output of an event-driven connection (outq.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "budget.h"
#include "bufpool.h"
#include "listing.h"
#include "outq.h"

#define OUTQ_IOV 16             /* segments one writev sends at most */
/* The pool this thread's small segments come from and go back to
 * (outq_use_pool); NULL: malloc and free. */
static __thread struct bufpool *pool;

void outq_use_pool(struct bufpool *p)
{
    pool = p;
}

/* A small one is always made OUTQ_SEG_SMALL bytes, so that any pool of
 * that size may keep it. */
static struct outq_seg *seg_alloc(size_t len)
{
    if (len > OUTQ_SMALL)
        return malloc(sizeof(struct outq_seg) + len);
    return pool ? bufpool_get(pool) : malloc(OUTQ_SEG_SMALL);
}

void outq_init(struct outq *q, struct conn *owner)
{
    q->head = q->tail = NULL;
    q->bytes = 0;
    q->owner = owner;
}

/* A segment holds all of its memory (a copy, or a whole listing) until it
 * is freed: that is what it is charged, once made and until then. */
static void seg_free(struct outq *q, struct outq_seg *g)
{
    budget_release(q->owner, g->len);
    if (g->listing) {
        listing_put(g->listing);
        free(g);
        return;
    }
    if (g->len <= OUTQ_SMALL && pool) {     /* wiped: replies hold SSNs */
        bufpool_put(pool, g, OUTQ_SEG_SMALL, sizeof(*g) + g->len);
        return;
    }
    explicit_bzero(g->data, g->len);
    free(g);
}

void outq_clear(struct outq *q)
{
    while (q->head) {
        struct outq_seg *g = q->head;
        q->head = g->next;
        seg_free(q, g);
    }
    q->head = q->tail = NULL;
    q->bytes = 0;
}

static void append(struct outq *q, struct outq_seg *g)
{
    g->next = NULL;
    if (q->tail)
        q->tail->next = g;
    else
        q->head = g;
    q->tail = g;
    q->bytes += g->len - g->off;
    budget_charge(q->owner, g->len);
}

int outq_push_bytes(struct outq *q, const void *data, size_t len)
{
    struct outq_seg *g = seg_alloc(len);

    if (!g)
        return -ENOMEM;
    g->listing = NULL;
    g->off = 0;
    g->len = len;
    memcpy(g->data, data, len);
    append(q, g);
    return 0;
}

int outq_push_listing(struct outq *q, struct listing *l, size_t off)
{
    struct outq_seg *g = malloc(sizeof(*g));

    if (!g) {
        listing_put(l);
        return -ENOMEM;
    }
    g->listing = l;
    g->off = off;
    g->len = l->len;
    append(q, g);
    return 0;
}

static const char *seg_bytes(const struct outq_seg *g)
{
    return g->listing ? g->listing->data : g->data;
}

const void *outq_head(const struct outq *q, size_t *len)
{
    const struct outq_seg *g = q->head;

    if (!g) {
        *len = 0;
        return NULL;
    }
    *len = g->len - g->off;
    return seg_bytes(g) + g->off;
}

void outq_advance(struct outq *q, size_t sent)
{
    q->bytes -= sent;
    for (size_t left = sent; left > 0 && q->head;) {
        struct outq_seg *g = q->head;
        size_t here = g->len - g->off;
        if (left < here) {
            g->off += left;
            break;
        }
        left -= here;
        q->head = g->next;
        if (!q->head)
            q->tail = NULL;
        seg_free(q, g);
    }
}

ssize_t outq_send(struct outq *q, int fd)
{
    struct iovec iov[OUTQ_IOV];
    struct msghdr msg = { .msg_iov = iov };
    int n = 0;

    for (struct outq_seg *g = q->head; g && n < OUTQ_IOV; g = g->next, n++) {
        iov[n].iov_base = (char *)seg_bytes(g) + g->off;
        iov[n].iov_len = g->len - g->off;
    }
    if (n == 0)
        return 0;
    msg.msg_iovlen = (size_t)n;
    ssize_t sent = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0)
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    outq_advance(q, (size_t)sent);
    return sent;
}
