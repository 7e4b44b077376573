/* econn.c -- one connection of the event-driven driver (econn.h): the
 * read, write and linger callbacks, and the send hooks its session calls.
 *
 * Reads answer every complete request; the batch's replies go out with one
 * send. What the socket does not take waits in c->q, reading stops until it
 * has gone (so a client that does not read cannot make the server buffer
 * without end: past --max-output it is disconnected), and the connection
 * watches for writability. Replies that acknowledge a journal record not
 * yet durable wait in c->q too (hold_seq), and the journal wakes the
 * connection when it is (on_journal): the worker never waits for the
 * journal. Only fine's streamed PRINT blocks, writing while this thread
 * holds the store lock (econn_send_locked): that stall is what the mode
 * exists to show, bounded by --write-timeout.
 */
#include <assert.h>
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

static int econn_send(void *arg, const void *data, size_t len,
                      uint64_t durable);
static int econn_send_listing(void *arg, struct listing *l, uint64_t durable);
static int econn_send_locked(void *arg, const void *data, size_t len);
static int econn_drained(void *arg);

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
                                   .send_locked = econn_send_locked,
                                   .drained = econn_drained,
                                   .never_waits = 1,
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

/* fine's streamed PRINT (session_io.send_locked): this thread holds the
 * store lock, and the client gets data before anyone else gets the lock,
 * the worker blocking for it (fine's lesson, bounded by --write-timeout).
 * The PRINT began with nothing queued (reply_drained), so nothing here
 * waits for the journal. */
static int econn_send_locked(void *arg, const void *data, size_t len)
{
    struct econn *c = arg;
    const char *p = data;

    assert(c->hold_seq == 0 && c->q.bytes == 0);
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

/* The event driver's one way out (session_io.send): never blocks. Sends
 * what the socket takes when nothing is queued or held, and queues the
 * rest, to go when the socket is writable and the journal record is
 * durable (settle). */
static int econn_send(void *arg, const void *data, size_t len,
                      uint64_t durable)
{
    struct econn *c = arg;
    const char *p = data;
    int rc = hold_for(c, durable);

    if (rc)
        return rc;
    if (may_send_now(c)) {
        ssize_t n = send_now(c->conn.fd, p, len);
        if (n < 0)
            return (int)n;
        p += n;
        len -= (size_t)n;
    }
    if (len == 0)
        return 0;
    rc = queue_room(c, len);
    return rc ? rc : outq_push_bytes(&c->q, p, len);
}

/* A shared PRINT listing, the same way out as econn_send. */
static int econn_send_listing(void *arg, struct listing *l, uint64_t durable)
{
    struct econn *c = arg;
    size_t off = 0;
    int rc = hold_for(c, durable);

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
    return may_send_now(arg);
}

/* ---- reading and writing ------------------------------------------------ */

/* Reading on or off; the read event is added and deleted only when that
 * changes (each is an epoll_ctl). Adding it restarts --timeout. */
static void read_on(struct econn *c)
{
    struct timeval tv;

    if (!c->reading)
        event_add(c->rev, timeout_of(srv.opt.idle_timeout_s, &tv));
    c->reading = 1;
}

static void read_off(struct econn *c)
{
    if (c->reading)
        event_del(c->rev);
    c->reading = 0;
}

/* Watching for writability, once, with --write-timeout from then on. */
static void write_on(struct econn *c)
{
    struct timeval tv;

    if (!c->writing)
        event_add(c->wev, timeout_of(srv.opt.write_timeout_s, &tv));
    c->writing = 1;
}

static void write_off(struct econn *c)
{
    if (c->writing)
        event_del(c->wev);
    c->writing = 0;
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
    struct journal *j = c->conn.session->store->journal;

    end_session(c);
    if (!c->released)
        conns_note_end(&c->conn, c->idle, c->begin_error);
    if (c->rev)
        event_free(c->rev);
    if (c->wev)
        event_free(c->wev);
    if (c->granted)
        event_free(c->granted);
    if (j) {
        journal_wait_cancel(j, &c->jwaiter);
        journal_wait_cancel(j, &c->cwaiter);
    }
    if (c->journal_ev)
        event_free(c->journal_ev);
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
    read_off(c);
    event_add(c->rev, &tv);
    c->reading = 1;
}

static void begin_closing(struct econn *c)
{
    end_session(c);                     /* coarse: the lock goes on now */
    c->state = ECONN_CLOSING;
    read_off(c);
}

/* ---- what comes next ------------------------------------------------------ */

/* The journal's answer for the record the queue is held for: 0 when it is
 * durable (the hold is over), -EAGAIN when c waits for it (queued with the
 * journal; on_journal comes back), -EIO when it never will be. */
static int hold_over(struct econn *c)
{
    struct journal *j = c->conn.session->store->journal;
    int rc = journal_wait_async(j, &c->jwaiter, c->hold_seq);

    if (rc == -EAGAIN) {
        events_commit_soon(c->w, c->hold_seq);
        return rc;
    }
    if (journal_durable(j, c->hold_seq) < 0)
        return -EIO;
    c->hold_seq = 0;
    return 0;
}

/* After a slice of requests, and after each thing the connection waited
 * for (the journal, the socket, its turn): sends what may leave, then
 * decides what to wait for next. more: complete requests may be buffered.
 * While replies wait for the journal, reading stays as it is: a client
 * with one request in flight sends nothing more, and a client that does
 * is stopped then (on_read), so the common case costs no epoll_ctl. */
static void settle(struct econn *c, int more)
{
    struct session *s = c->conn.session;
    int rc = c->hold_seq ? hold_over(c) : 0;

    if (rc == -EAGAIN)
        return;                         /* on_journal comes back */
    if (rc == 0 && c->q.bytes) {
        ssize_t n = outq_send(&c->q, c->conn.fd);
        rc = n < 0 && n != -EAGAIN ? (int)n : 0;
    }
    if (rc || s->send_error) {
        econn_close(c);                 /* the client is gone or stuck, or
                                           the replies must not leave */
        return;
    }
    if (s->ending && c->state != ECONN_CLOSING)
        begin_closing(c);
    if (c->q.bytes) {                   /* on_write comes back */
        read_off(c);
        write_on(c);
        return;
    }
    write_off(c);
    if (c->state == ECONN_CLOSING) {
        begin_linger(c);
    } else if (session_waiting(s) == SESSION_WAITS_COMPACT &&
               journal_compact_wait_async(s->store->journal, &c->cwaiter,
                                          s->compact_gen) == -EAGAIN) {
        return;                         /* on_journal comes back */
    } else if (more || session_waiting(s) != SESSION_RUNS) {
        static const struct timeval now = { 0, 0 };
        read_off(c);
        /* The worker's other clients first, then the rest. A timer, not
         * event_active: an active event would run again in this same
         * pass of the loop, before the loop polls the sockets; an expired
         * timer waits for the next pass, after the poll. */
        event_add(c->more, &now);
    } else {
        read_on(c);
    }
}

/* Answers what arrived (n bytes, or 0 to go on with what is buffered) for
 * one time slice, has its replies sent (marked for the journal), and
 * settles what comes next. */
static void serve(struct econn *c, size_t n)
{
    int more;

    session_received_slice(c->conn.session, n, ECONN_SLICE_NS, &more);
    session_flush(c->conn.session);
    settle(c, more);
}

/* Complete requests may wait in the input buffer. */
static int input_left(const struct econn *c)
{
    return lr_pending(&c->conn.session->in) > 0;
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

/* The journal's word, on another thread, with the journal's lock held:
 * only wake this connection's worker. */
static void notify_journal(void *arg)
{
    struct econn *c = arg;
    event_active(c->journal_ev, EV_READ, 0);
}

static void on_journal(evutil_socket_t fd, short what, void *arg)
{
    struct econn *c = arg;
    (void)fd; (void)what;

    if (c->state == ECONN_OPEN || c->state == ECONN_CLOSING)
        settle(c, input_left(c));
}

static void on_more(evutil_socket_t fd, short what, void *arg)
{
    struct econn *c = arg;
    (void)fd; (void)what;

    if (c->state == ECONN_OPEN)
        serve(c, 0);
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
    if (c->hold_seq || c->q.bytes ||    /* more, or a timeout, while */
        session_waiting(s) != SESSION_RUNS) {   /* replies or a request */
        read_off(c);                    /* wait: settle reads on */
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
    serve(c, (size_t)n);
}

static void on_write(evutil_socket_t fd, short what, void *arg)
{
    struct econn *c = arg;

    if (what & EV_TIMEOUT) {
        c->conn.session->send_error = -EAGAIN;  /* --write-timeout */
        econn_close(c);
        return;
    }
    if (c->hold_seq) {                  /* cannot be: nothing is written */
        write_off(c);                   /* while held (settle) */
        return;
    }
    ssize_t n = outq_send(&c->q, fd);
    if (n < 0 && n != -EAGAIN) {
        econn_close(c);
        return;
    }
    if (c->q.bytes == 0)
        settle(c, c->state == ECONN_OPEN && input_left(c));
}

/* The store's hand-over, on another thread, with its handoff mutex held:
 * only wake this connection's worker. */
static void notify_granted(void *arg)
{
    struct econn *c = arg;
    event_active(c->granted, EV_READ, 0);
}

static void on_granted(evutil_socket_t fd, short what, void *arg)
{
    struct econn *c = arg;
    (void)fd; (void)what;

    session_begin_adopt(c->conn.session, &c->waiter);
    c->state = ECONN_OPEN;
    read_on(c);
}

void econn_begin(struct econn *c, struct event_base *base)
{
    int fd = c->conn.fd;

    c->rev = event_new(base, fd, EV_READ | EV_PERSIST, on_read, c);
    c->wev = event_new(base, fd, EV_WRITE | EV_PERSIST, on_write, c);
    c->granted = event_new(base, -1, 0, on_granted, c);
    c->more = event_new(base, -1, 0, on_more, c);
    c->journal_ev = event_new(base, -1, 0, on_journal, c);
    c->jwaiter.notify = notify_journal;
    c->jwaiter.arg = c;
    c->cwaiter.notify = notify_journal;
    c->cwaiter.arg = c;
    c->waiter.notify = notify_granted;
    c->waiter.arg = c;
    if (!c->rev || !c->wev || !c->granted || !c->more || !c->journal_ev) {
        econn_close(c);
        return;
    }
    int rc = session_begin_nowait(c->conn.session, &c->waiter);
    if (rc == 0) {
        c->state = ECONN_OPEN;
        read_on(c);
    } else if (rc == -EAGAIN) {
        c->state = ECONN_PARKED;        /* unread until its turn */
    } else {
        c->begin_error = rc;
        econn_close(c);
    }
}
