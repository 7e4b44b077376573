/* journal_reply.c -- a thread session's replies held until the record they
 * acknowledge is durable, then sent by whoever ended that round
 * (journal.h, struct journal_reply). With a thread per connection, waiting
 * in journal_wait cost every durable reply a second wake-up of its session
 * thread, which on a busy machine waits its turn among all the others
 * (0.5 ms at the median with 50 connections on 2 cores); the round's own
 * thread, running already, sends them instead. State under j->lock; the
 * sends with no lock held.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include "journal.h"
#include "journal_int.h"
#include "journal_seams.h"
#include "lockmode.h"

void journal_reply_init(struct journal_reply *r, int fd)
{
    memset(r, 0, sizeof(*r));
    r->fd = fd;
    r->state = JREPLY_IDLE;
    pthread_cond_init(&r->done, NULL);
}

void journal_reply_destroy(struct journal_reply *r)
{
    pthread_cond_destroy(&r->done);
    explicit_bzero(r->data, sizeof(r->data));
}

static void link_locked(struct journal *j, struct journal_reply *r)
{
    r->prev = NULL;
    r->next = j->replies;
    if (j->replies)
        j->replies->prev = r;
    j->replies = r;
    r->state = JREPLY_QUEUED;
    atomic_fetch_add_explicit(&j->replies_queued, 1, memory_order_relaxed);
}

static void unlink_locked(struct journal *j, struct journal_reply *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        j->replies = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->prev = r->next = NULL;
    r->state = JREPLY_IDLE;
    atomic_fetch_sub_explicit(&j->replies_queued, 1, memory_order_relaxed);
}

/* Until no round's thread is sending r; j->lock held. */
static void wait_not_sending_locked(struct journal *j, struct journal_reply *r)
{
    while (r->state == JREPLY_SENDING) {
        r->owner_waits = 1;
        pthread_cond_wait(&r->done, &j->lock);
    }
}

/* A straggler's count goes with it when it leaves the queue. */
static void unstraggle_locked(struct journal *j, struct journal_reply *r)
{
    if (r->straggling) {
        r->straggling = 0;
        j->stragglers--;
    }
}

int journal_reply_push(struct journal *j, struct journal_reply *r,
                       const void *data, size_t len, uint64_t seq)
{
    int rc = 0;

    STORE_ASSERT_NOT_HELD(j->store);
    pthread_mutex_lock(&j->lock);
    wait_not_sending_locked(j, r);
    if (r->err || j->broken) {
        rc = r->err ? r->err : -EIO;
        goto out;
    }
    uint64_t durable = atomic_load(&j->durable_seq);
    if (r->state == JREPLY_IDLE) {
        if (r->len > r->off) {          /* taken back and not yet sent */
            rc = -E2BIG;
            goto out;
        }
        if (seq <= durable) {
            rc = 1;                     /* nothing held, nothing to wait */
            goto out;
        }
        r->off = r->len = 0;
        r->seq = 0;
    }
    if (len > sizeof(r->data) - (r->len - r->off)) {
        rc = -E2BIG;
        goto out;
    }
    if (r->len + len > sizeof(r->data)) {
        memmove(r->data, r->data + r->off, r->len - r->off);
        r->len -= r->off;
        r->off = 0;
    }
    memcpy(r->data + r->len, data, len);
    r->len += len;
    if (seq > r->seq)
        r->seq = seq;
    if (r->state == JREPLY_IDLE)
        link_locked(j, r);
    atomic_store_explicit(&r->held, 1, memory_order_release);
    /* The flusher leads the round when none is under way; a round under
     * way ends by starting the next when records wait (journal_commit). */
    if (r->seq > durable && !j->flushing)
        pthread_cond_signal(&j->work);
out:
    pthread_mutex_unlock(&j->lock);
    return rc;
}

int journal_reply_take(struct journal *j, struct journal_reply *r)
{
    int rc;

    pthread_mutex_lock(&j->lock);
    wait_not_sending_locked(j, r);
    if (r->state == JREPLY_QUEUED) {
        unstraggle_locked(j, r);
        unlink_locked(j, r);
    }
    atomic_store_explicit(&r->held, 0, memory_order_release);
    rc = r->err;
    pthread_mutex_unlock(&j->lock);
    return rc;
}

void journal_replies_due_locked(struct journal *j, struct journal_reply **out)
{
    uint64_t durable = atomic_load(&j->durable_seq);
    struct journal_reply *r = j->replies, *next;

    *out = NULL;
    for (; r; r = next) {
        next = r->next;
        if (r->seq > durable && !j->broken)
            continue;
        unstraggle_locked(j, r);
        unlink_locked(j, r);
        r->state = JREPLY_SENDING;
        r->next = *out;
        *out = r;
    }
}

/* One send, no lock held: what the socket took, or -errno. A round that
 * failed sends nothing: the socket is shut down, so that the session's
 * read(2) returns and the connection ends with no reply. */
static ssize_t send_one(struct journal_reply *r, int broken)
{
    if (broken) {
        shutdown(r->fd, SHUT_RDWR);
        return -EIO;
    }
    ssize_t n = send(r->fd, r->data + r->off, r->len - r->off,
                     MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return 0;
    return n < 0 ? -errno : n;
}

void journal_replies_deliver_locked(struct journal *j,
                                    struct journal_reply *list)
{
    int broken = j->broken;

    if (!list)
        return;
    pthread_mutex_unlock(&j->lock);
    /* Each reply's owner is in read(2) or waits for the state to change:
     * nobody else touches r while it is SENDING. The result is kept in
     * r->err (0) and r->off until the lock is taken again. */
    for (struct journal_reply *r = list; r; r = r->next) {
        ssize_t n = send_one(r, broken);
        if (n < 0)
            r->err = (int)n;
        else
            r->off += (size_t)n;
    }
    pthread_mutex_lock(&j->lock);
    for (struct journal_reply *r = list, *next; r; r = next) {
        int done = 1;

        next = r->next;
        r->prev = r->next = NULL;
        r->state = JREPLY_IDLE;
        if (!r->err && r->off < r->len) {
            link_locked(j, r);          /* the rest, in 100 ms */
            r->straggling = 1;
            j->stragglers++;
            done = 0;
        } else if (!r->err) {
            r->off = r->len = 0;
        }
        journal_seam_deliver_delay();   /* the test build's window */
        if (r->owner_waits) {
            r->owner_waits = 0;
            pthread_cond_signal(&r->done);
        }
        /* Last: an owner that reads held 0 takes no lock and may free r
         * at once (conn_settle), so nothing here touches r after it. */
        if (done)
            atomic_store_explicit(&r->held, 0, memory_order_release);
    }
}
