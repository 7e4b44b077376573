/* outq.h -- what an event-driven connection still has to send: a queue of
 * byte runs (copied) and shared PRINT listings (referenced, never copied),
 * sent with writev(2) as far as the socket takes it. Used when a send did
 * not complete at once, and for every reply held for the journal (a
 * journaled write's, econn_send.c): its small segments come from the
 * worker's pool (outq_use_pool), so that no request allocates.
 *
 * Owned by one connection, used by its worker thread only: no lock. What
 * it holds is charged to the connection's share of the reply budget
 * (budget.h) while it holds it.
 */
#ifndef SSN_OUTQ_H
#define SSN_OUTQ_H

#include <stddef.h>
#include <sys/types.h>

struct listing;
struct conn;

struct outq_seg {
    struct outq_seg *next;
    struct listing *listing;    /* NULL: the bytes follow in data */
    size_t off, len;            /* what is left to send: [off, len) */
    char data[];
};

struct outq {
    struct outq_seg *head, *tail;
    size_t bytes;               /* left to send, over every segment */
    struct conn *owner;         /* charged for bytes (budget.h); NULL:
                                   nobody */
};

/* An empty queue whose bytes are charged to owner. */
void outq_init(struct outq *q, struct conn *owner);

/* Drops everything (and the listing references). */
void outq_clear(struct outq *q);

/* Queues a copy of data; 0 or -ENOMEM. */
int outq_push_bytes(struct outq *q, const void *data, size_t len);

/* Queues l from byte off on, taking over the caller's reference (also on
 * failure, when it is dropped). 0 or -ENOMEM: the reply is lost, and the
 * caller must end the session rather than go on without it. */
int outq_push_listing(struct outq *q, struct listing *l, size_t off);

/* Small segments (OUTQ_SMALL bytes of reply or fewer) are made of
 * OUTQ_SEG_SMALL bytes; this thread's come from p and go back to it
 * (bufpool.h: wiped, at most its max kept), NULL: malloc and free. An
 * event worker sets its own pool before its loop runs. */
#define OUTQ_SMALL      128
#define OUTQ_SEG_SMALL  (sizeof(struct outq_seg) + OUTQ_SMALL)
struct bufpool;
void outq_use_pool(struct bufpool *p);

/* The head segment's bytes not yet sent (*len of them), NULL when the
 * queue is empty; advance: sent bytes from the head have gone (sent <=
 * q->bytes), as outq_send does after its sendmsg. For a send made
 * elsewhere (econn_batch.c). */
const void *outq_head(const struct outq *q, size_t *len);
void outq_advance(struct outq *q, size_t sent);

/* Sends from the head without blocking. Returns bytes sent (> 0), 0 when
 * the queue is empty, -EAGAIN when the socket took nothing, or -errno. */
ssize_t outq_send(struct outq *q, int fd);

#endif
