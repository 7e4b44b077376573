/* econn.c -- one connection of the event-driven driver (econn.h): the
 * read, write and linger callbacks, and the send hooks its session calls.
 *
 * Reads answer every complete request; the batch's replies go out with one
 * send. What the socket does not take waits in c->q, reading stops until it
 * has gone (so a client that does not read cannot make the server buffer
 * without end: past --max-output it is disconnected), and the connection
 * watches for writability. Only a send made while this thread holds the
 * store lock blocks (fine's PRINT, coarse's whole session): that stall is
 * what those modes exist to show, bounded by --write-timeout.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include "econn.h"
#include "listing.h"
#include "log.h"
#include "session.h"
#include "timeutil.h"

/* How long one connection may answer buffered requests before its
 * worker's other connections get their turn (memcached's -R, by time). */
#define ECONN_SLICE_NS  (200 * 1000)

static int econn_send(void *arg, const void *data, size_t len);
static int econn_send_listing(void *arg, struct listing *l);

static const struct timeval *timeout_of(long seconds, struct timeval *tv)
{
    tv->tv_sec = seconds;
    tv->tv_usec = 0;
    return seconds ? tv : NULL;
}

struct econn *econn_new(struct worker *w, int fd, const char *peer)
{
    struct econn *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    const struct session_io io = { .send = econn_send,
                                   .send_listing = econn_send_listing,
                                   .arg = c };
    c->conn.fd = fd;
    snprintf(c->conn.peer, sizeof(c->conn.peer), "%s", peer);
    c->conn.session = session_new(&srv.store, &io, 0);
    if (!c->conn.session) {
        free(c);
        return NULL;
    }
    session_set_output_limit(c->conn.session, srv.opt.max_output);
    session_set_batch(c->conn.session, srv.opt.batch - 1);
    session_set_peer(c->conn.session, peer);
    c->w = w;
    outq_init(&c->q);
    conns_register(&c->conn);
    return c;
}

/* ---- sending ------------------------------------------------------------ */

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

/* The store lock is held by this thread: the client gets everything queued
 * and data before anyone else gets the lock (fine's lesson). */
static int send_blocking(struct econn *c, const char *data, size_t len)
{
    int fd = c->conn.fd;

    while (c->q.bytes) {
        ssize_t n = outq_send(&c->q, fd);
        if (n == -EAGAIN && wait_writable(fd))
            return -EAGAIN;
        if (n < 0 && n != -EAGAIN)
            return (int)n;
    }
    while (len > 0) {
        ssize_t n = send_now(fd, data, len);
        if (n < 0)
            return (int)n;
        if (n == 0 && wait_writable(fd))
            return -EAGAIN;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

static void want_write(struct econn *c)
{
    struct timeval tv;

    event_add(c->wev, timeout_of(srv.opt.write_timeout_s, &tv));
}

/* Takes what the socket will not: queued, within the output limit. */
static int queue_rest(struct econn *c, size_t more)
{
    if (c->q.bytes + more > srv.opt.max_output)
        return -ENOBUFS;
    want_write(c);
    return 0;
}

static int econn_send(void *arg, const void *data, size_t len)
{
    struct econn *c = arg;
    const char *p = data;

    if (store_lock_owned(c->conn.session->store))
        return send_blocking(c, p, len);
    if (c->q.bytes == 0) {
        ssize_t n = send_now(c->conn.fd, p, len);
        if (n < 0)
            return (int)n;
        p += n;
        len -= (size_t)n;
    }
    if (len == 0)
        return 0;
    int rc = queue_rest(c, len);
    return rc ? rc : outq_push_bytes(&c->q, p, len);
}

/* Called after the store lock was released: never blocks. */
static int econn_send_listing(void *arg, struct listing *l)
{
    struct econn *c = arg;
    size_t off = 0;

    if (c->q.bytes == 0) {
        ssize_t n = send_now(c->conn.fd, l->data, l->len);
        if (n < 0) {
            listing_put(l);
            return (int)n;
        }
        off = (size_t)n;
    }
    if (off == l->len) {
        listing_put(l);
        return 0;
    }
    int rc = queue_rest(c, l->len - off);
    if (rc) {
        listing_put(l);
        return rc;
    }
    return outq_push_listing(&c->q, l, off);    /* -ENOMEM ends the session */
}

/* ---- ending --------------------------------------------------------------- */

static void end_session(struct econn *c)
{
    if (c->state == ECONN_PARKED) {
        if (store_lock_cancel(&srv.store, &c->waiter)) {
            session_begin_adopt(c->conn.session, &c->waiter);
            session_end(c->conn.session);
        }
    } else if (c->state == ECONN_OPEN) {
        session_end(c->conn.session);
    }
}

/* The connection no longer counts: it is out of the registry (so
 * --max-clients has room) and the policy may admit the next one. */
static void release(struct econn *c)
{
    if (!c->released)
        conns_release(&c->conn);
    c->released = 1;
}

void econn_close(struct econn *c)
{
    end_session(c);
    if (!c->released)
        conns_note_end(&c->conn, c->idle, c->begin_error);
    if (c->rev)
        event_free(c->rev);
    if (c->wev)
        event_free(c->wev);
    if (c->granted)
        event_free(c->granted);
    if (c->held)
        journal_wait_cancel(c->conn.session->store->journal, &c->jwaiter);
    if (c->durable)
        event_free(c->durable);
    if (c->more)
        event_free(c->more);
    outq_clear(&c->q);
    session_free(c->conn.session);
    release(c);
    close(c->conn.fd);
    events_forget(c);
    free(c);
}

/* After QUIT (or an output limit): every reply due is sent first, then the
 * server shuts its side and drains input for a while (see threads.c's
 * linger_close for why), without holding the worker. */
static void begin_linger(struct econn *c)
{
    struct timeval tv = { .tv_sec = SSN_LINGER_MS / 1000,
                          .tv_usec = (SSN_LINGER_MS % 1000) * 1000 };

    conns_note_end(&c->conn, 0, 0);
    release(c);
    c->state = ECONN_LINGER;
    c->linger_until = time_now_ns() + SSN_LINGER_MS * TIME_NS_PER_MS;
    shutdown(c->conn.fd, SHUT_WR);
    event_del(c->rev);
    event_add(c->rev, &tv);
}

static void begin_closing(struct econn *c)
{
    end_session(c);                     /* coarse: the lock goes on now */
    c->state = ECONN_CLOSING;
    event_del(c->rev);
    if (c->conn.session->send_error) {
        econn_close(c);                 /* the client is gone or stuck */
        return;
    }
    if (c->q.bytes == 0)
        begin_linger(c);
}

/* ---- the callbacks -------------------------------------------------------- */

static void on_linger(struct econn *c, short what)
{
    char junk[4096];

    if (!(what & EV_TIMEOUT) &&
        recv(c->conn.fd, junk, sizeof(junk), MSG_DONTWAIT) > 0 &&
        time_now_ns() < c->linger_until)
        return;
    econn_close(c);
}

/* Sends a slice's replies, and decides what to wait for next: the worker's
 * other clients (more requests buffered), the client reading (replies
 * queued), or more requests. */
static void answered(struct econn *c, int done, int more, int reread)
{
    struct session *s = c->conn.session;
    struct timeval tv;

    session_flush(s);                   /* durable by now: never blocks */
    if (done || s->ending) {
        begin_closing(c);
        return;
    }
    if (more) {                         /* others first, then the rest */
        static const struct timeval now = { 0, 0 };
        event_del(c->rev);
        /* A timer, not event_active: an active event would run again in
         * this same pass of the loop, before the loop polls the sockets;
         * an expired timer waits for the next pass, after the poll. */
        event_add(c->more, &now);
    } else if (c->q.bytes) {
        event_del(c->rev);              /* on_write resumes reading */
    } else if (reread) {
        event_add(c->rev, timeout_of(srv.opt.idle_timeout_s, &tv));
    }                                   /* else reading simply goes on */
}

/* Answers what arrived (n bytes, or 0 to go on with what is buffered) for
 * one time slice. Replies that acknowledge mutations not yet durable are
 * held, and no more requests answered, until the journal's round says so
 * (on_durable): the worker serves its other clients meanwhile. */
static void answer(struct econn *c, size_t n)
{
    int more;
    int done = session_received_slice(c->conn.session, n, ECONN_SLICE_NS,
                                      &more);

    if (session_durable_async(c->conn.session, &c->jwaiter) == -EAGAIN) {
        c->held = 1;
        c->held_done = done;
        c->held_more = more;
        /* Reading stays armed: a client with one request in flight sends
         * nothing more until answered, so on_read never runs and the
         * socket costs no epoll_ctl to stop and restart. One that does
         * send more is stopped then (on_read). */
        events_commit_soon(c->w, c->conn.session->journal_seq);
        return;
    }
    answered(c, done, more, n == 0);
}

/* The flusher's word, on another thread, with the journal's lock held:
 * only wake this connection's worker. */
static void notify_durable(void *arg)
{
    struct econn *c = arg;
    event_active(c->durable, EV_READ, 0);
}

static void on_durable(evutil_socket_t fd, short what, void *arg)
{
    struct econn *c = arg;
    (void)fd; (void)what;

    if (!c->held)
        return;
    c->held = 0;
    answered(c, c->held_done, c->held_more, 1);
}

static void on_more(evutil_socket_t fd, short what, void *arg)
{
    struct econn *c = arg;
    (void)fd; (void)what;

    if (c->state == ECONN_OPEN)
        answer(c, 0);
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
    struct econn *c = arg;
    struct session *s = c->conn.session;
    size_t room;

    if (c->state == ECONN_LINGER) {
        on_linger(c, what);
        return;
    }
    if (c->held) {                      /* more, or a timeout, while the */
        event_del(c->rev);              /* replies wait: on_durable reads */
        return;
    }
    if (what & EV_TIMEOUT) {
        c->idle = 1;                    /* --timeout */
        econn_close(c);
        return;
    }
    char *p = session_recv_space(s, &room);
    ssize_t n = recv(fd, p, room, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0) {
        econn_close(c);
        return;
    }
    answer(c, (size_t)n);
}

static void on_write(evutil_socket_t fd, short what, void *arg)
{
    struct econn *c = arg;
    struct timeval tv;

    if (what & EV_TIMEOUT) {
        c->conn.session->send_error = -EAGAIN;  /* --write-timeout */
        econn_close(c);
        return;
    }
    ssize_t n = outq_send(&c->q, fd);
    if (n < 0 && n != -EAGAIN) {
        econn_close(c);
        return;
    }
    if (c->q.bytes)
        return;
    event_del(c->wev);
    if (c->state == ECONN_CLOSING)
        begin_linger(c);
    else if (c->state == ECONN_OPEN && !c->held)
        event_add(c->rev, timeout_of(srv.opt.idle_timeout_s, &tv));
}

/* The store's hand-over, on another thread, with its handoff mutex held:
 * only wake this connection's worker. */
static void notify_granted(void *arg)
{
    struct econn *c = arg;
    event_active(c->granted, EV_READ, 0);
}

static void open_session(struct econn *c)
{
    struct timeval tv;

    c->state = ECONN_OPEN;
    event_add(c->rev, timeout_of(srv.opt.idle_timeout_s, &tv));
}

static void on_granted(evutil_socket_t fd, short what, void *arg)
{
    struct econn *c = arg;
    (void)fd; (void)what;

    session_begin_adopt(c->conn.session, &c->waiter);
    open_session(c);
}

void econn_begin(struct econn *c, struct event_base *base)
{
    int fd = c->conn.fd;

    c->rev = event_new(base, fd, EV_READ | EV_PERSIST, on_read, c);
    c->wev = event_new(base, fd, EV_WRITE | EV_PERSIST, on_write, c);
    c->granted = event_new(base, -1, 0, on_granted, c);
    c->more = event_new(base, -1, 0, on_more, c);
    c->durable = event_new(base, -1, 0, on_durable, c);
    c->jwaiter.notify = notify_durable;
    c->jwaiter.arg = c;
    c->waiter.notify = notify_granted;
    c->waiter.arg = c;
    if (!c->rev || !c->wev || !c->granted || !c->more || !c->durable) {
        c->state = ECONN_CLOSING;
        econn_close(c);
        return;
    }
    int rc = session_begin_nowait(c->conn.session, &c->waiter);
    if (rc == 0) {
        open_session(c);
    } else if (rc == -EAGAIN) {
        c->state = ECONN_PARKED;        /* unread until its turn */
    } else {
        c->begin_error = rc;
        c->state = ECONN_CLOSING;
        econn_close(c);
    }
}
