/* econn_send.c -- the send hooks an event-driven connection's session
 * calls (econn.h, session.h's struct session_io): the one way out, which
 * never blocks (what the socket does not take, or what waits for a
 * journal record to be durable, goes into c->q; econn.c's settle sends it
 * later), and fine's streamed PRINT, which blocks while this thread holds
 * the store lock: that stall is what the mode exists to show, bounded by
 * --write-timeout. Used by the connection's worker thread only.
 */
#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include "econn.h"
#include "listing.h"
#include "session.h"

/* Sends without blocking; returns what was sent, or -errno (not EAGAIN). */
static ssize_t send_now(int fd, const void *data, size_t len)
{
    ssize_t n = send(fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR
               ? 0 : -errno;
    return n;
}

/* Waits until fd is writable, at most --write-timeout: 0 or -EAGAIN. */
static int wait_writable(int fd)
{
    struct pollfd p = { .fd = fd, .events = POLLOUT };
    long ms = srv.opt.write_timeout_s ? srv.opt.write_timeout_s * 1000 : -1;
    int rc;

    while ((rc = poll(&p, 1, (int)ms)) < 0 && errno == EINTR)
        ;
    return rc > 0 ? 0 : -EAGAIN;
}

/* fine's streamed PRINT (session_io.send_locked): this thread holds the
 * store lock, and the client gets data before anyone else gets the lock,
 * the worker blocking for it (fine's lesson, bounded by --write-timeout).
 * The PRINT began with nothing queued (reply_drained), so nothing here
 * waits for the journal. */
static int econn_send_locked(void *arg, const void *data, size_t len)
{
    struct econn *c = arg;
    const char *p = data;

    assert(c->hold_seq == 0 && c->q.bytes == 0 && !c->batched);
    while (len > 0) {
        ssize_t n = send_now(c->conn.fd, p, len);
        if (n < 0)
            return (int)n;
        if (n == 0 && wait_writable(c->conn.fd))
            return -EAGAIN;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* The journal record a send's bytes acknowledge: from now on the queue is
 * held until it is durable (settle asks the journal once the slice ends).
 * Returns 0, or -EIO when it never will be: nothing may leave. */
static int hold_for(struct econn *c, uint64_t durable)
{
    if (!durable || durable <= c->hold_seq)
        return 0;
    int rc = journal_durable(c->conn.session->store->journal, durable);
    if (rc < 0)
        return rc;
    if (rc == 0)
        c->hold_seq = durable;
    return 0;
}

/* What may leave at once: nothing while anything is queued or held. */
static int may_send_now(const struct econn *c)
{
    return c->q.bytes == 0 && c->hold_seq == 0;
}

/* Room in the queue, within the output limit. */
static int queue_room(const struct econn *c, size_t more)
{
    return c->q.bytes + more > srv.opt.max_output ? -ENOBUFS : 0;
}

int econn_queue_rest(struct econn *c, const void *data, size_t len)
{
    int rc = queue_room(c, len);
    return rc ? rc : outq_push_bytes(&c->q, data, len);
}

/* The event driver's one way out (session_io.send): never blocks. Sends
 * what the socket takes when nothing is queued or held (in a round:
 * copies it to leave with the group's others, econn_batch.c), and queues
 * the rest, to go when the socket is writable and the journal record is
 * durable (settle). */
static int econn_send(void *arg, const void *data, size_t len,
                      uint64_t durable)
{
    struct econn *c = arg;
    const char *p = data;
    int rc;

    if (c->batched)
        econn_batch_out(c);             /* its copied run first */
    if ((rc = hold_for(c, durable)))
        return rc;
    if (c->conn.session->ending)
        conns_leaving(&c->conn);        /* before Bye leaves */
    if (may_send_now(c)) {
        if (econn_batch_take(c, p, len))
            return 0;
        ssize_t n = send_now(c->conn.fd, p, len);
        if (n < 0)
            return (int)n;
        p += n;
        len -= (size_t)n;
    }
    return len ? econn_queue_rest(c, p, len) : 0;
}

/* A shared PRINT listing, the same way out as econn_send. */
static int econn_send_listing(void *arg, struct listing *l, uint64_t durable)
{
    struct econn *c = arg;
    size_t off = 0;
    int rc;

    if (c->batched)
        econn_batch_out(c);             /* its copied run first */
    rc = hold_for(c, durable);

    if (rc == 0 && may_send_now(c)) {
        ssize_t n = send_now(c->conn.fd, l->data, l->len);
        if (n < 0)
            rc = (int)n;
        else
            off = (size_t)n;
    }
    if (rc == 0 && off < l->len)
        rc = queue_room(c, l->len - off);
    if (rc || off == l->len) {
        listing_put(l);
        return rc;
    }
    return outq_push_listing(&c->q, l, off);    /* -ENOMEM ends the session */
}

static int econn_drained(void *arg)
{
    struct econn *c = arg;

    if (c->batched)
        econn_batch_out(c);
    return may_send_now(c);
}

/* AUTH succeeded: the connection counts as authenticated, and the session
 * begins, or parks until the store's hand-over (coarse's lock, serial's
 * turn): econn_on_granted runs it on. */
static int econn_admit(void *arg)
{
    struct econn *c = arg;

    conns_authed(&c->conn);
    if (econn_need_park(c))
        return -ENOMEM;
    int rc = session_begin_nowait(c->conn.session, &c->park->waiter);
    if (rc == -EAGAIN)
        c->state = ECONN_PARKED;
    return rc;
}

const struct session_io econn_io = {
    .send = econn_send,
    .send_listing = econn_send_listing,
    .send_locked = econn_send_locked,
    .drained = econn_drained,
    .admit = econn_admit,
    .never_waits = 1,
};
