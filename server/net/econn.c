/* econn.c -- one connection of the event-driven driver (econn.h): its
 * socket event, the read and write callbacks, and what it waits for next
 * (its end and linger are econn_end.c's, its send hooks econn_send.c's).
 *
 * Reads answer every complete request; the batch's replies go out with one
 * send. What the socket does not take waits in c->q, reading stops until it
 * has gone (so a client that does not read cannot make the server buffer
 * without end: past --max-output it is disconnected), and the connection
 * watches for writability. Replies that acknowledge a journal record not
 * yet durable wait in c->q too (hold_seq) until the worker's commit after
 * the pass (econn_on_committed), or the journal's round, wakes the
 * connection (econn_on_journal): the worker never waits for the journal.
 */
#include <assert.h>
#include <errno.h>
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

#define ECONN_TRACE_POLL_US 5000    /* TRACE STOP: the file asked after */

static const struct timeval *timeout_of(long seconds, struct timeval *tv)
{
    tv->tv_sec = seconds;
    tv->tv_usec = 0;
    return seconds ? tv : NULL;
}

/* What every connection's session is told, made or taken again. */
static struct session *set_up(struct econn *c, struct session *s)
{
    if (s) {
        session_set_output_limit(s, srv.opt.max_output);
        session_set_batch(s, srv.opt.batch - 1);
        session_set_peer(s, c->conn.peer);
    }
    return s;
}

struct econn *econn_new(struct worker *w, int fd, const char *peer)
{
    struct econn *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->conn.fd = fd;
    snprintf(c->conn.peer, sizeof(c->conn.peer), "%s", peer);
    c->conn.session = set_up(c, session_new(&srv.store, &econn_io, c, 0));
    if (!c->conn.session) {
        free(c);
        return NULL;
    }
    c->w = w;
    outq_init(&c->q, &c->conn);
    conns_register(&c->conn);
    return c;
}

/* ---- the session, parked while idle ---------------------------------- */

/* c's session, taken again from its worker's pool if it was parked; NULL
 * when there is no memory for it. */
static struct session *session_of(struct econn *c)
{
    struct session *s = c->conn.session;

    if (!s) {
        s = set_up(c, session_new_pooled(events_pool(c->w), &srv.store,
                                         &econn_io, c));
        if (!s)
            return NULL;
        session_unpark(s, &c->keep);
        c->conn.session = s;
    }
    return s;
}

/* c waits for its client with nothing in progress: its buffers go back to
 * the pool, and its session too if it is idle (session_park). */
static void rest(struct econn *c)
{
    struct session *s = c->conn.session;

    if (!s)
        return;                         /* parked already */
    if (c->state != ECONN_OPEN)
        session_release(s);             /* the buffers at least */
    else if (session_park(s, &c->keep)) /* which releases them first */
        c->conn.session = NULL;
}

/* ---- reading and writing ------------------------------------------------ */

static void on_socket(evutil_socket_t fd, short what, void *arg);

/* A connection reads or waits to write, never both: its one socket event
 * is set for what it waits for now, and added (an epoll_ctl) only when
 * that changes. Never while it is added: event_assign's rule. */
void econn_watch(struct econn *c, short what, const struct timeval *tv)
{
    assert(!c->reading && !c->writing);
    event_assign(c->ev, event_get_base(c->ev), c->conn.fd,
                 what | EV_PERSIST, on_socket, c);
    event_add(c->ev, tv);
    c->reading = what == EV_READ;
    c->writing = what == EV_WRITE;
}

/* Reading on or off. Turning it on restarts --timeout. While c waits to
 * write it reads nothing (on_read would stop at once): econn_settle
 * turns reading on once the queue has gone. */
static void read_on(struct econn *c)
{
    struct timeval tv;

    if (!c->reading && !c->writing)
        econn_watch(c, EV_READ, timeout_of(srv.opt.idle_timeout_s, &tv));
}

void econn_read_off(struct econn *c)
{
    if (c->reading)
        event_del(c->ev);
    c->reading = 0;
}

/* Watching for writability, once, with --write-timeout from then on. */
static void write_on(struct econn *c)
{
    struct timeval tv;

    econn_read_off(c);
    if (!c->writing)
        econn_watch(c, EV_WRITE, timeout_of(srv.opt.write_timeout_s, &tv));
}

void econn_write_off(struct econn *c)
{
    if (c->writing)
        event_del(c->ev);
    c->writing = 0;
}

/* ---- what comes next ------------------------------------------------------ */

/* The journal's answer for the record the queue is held for: 0 when it is
 * durable (the hold is over), -EAGAIN when c waits for it (on its
 * worker's held list: econn_on_committed comes back), -EIO when it never
 * will be, -ENOMEM when c cannot wait. */
static int hold_over(struct econn *c)
{
    int rc = journal_durable(c->conn.session->store->journal, c->hold_seq);

    if (rc < 0)
        return -EIO;
    if (rc > 0) {
        c->hold_seq = 0;
        return 0;
    }
    if ((rc = econn_need_jwait(c)))
        return rc;
    /* Not with the journal yet: the worker's commit, after this pass,
     * usually makes the record durable itself (everysec, no), and then
     * sends c's replies with no waiter queued, notified or run. */
    events_hold(c);
    return -EAGAIN;
}

/* Reading stops, and the more timer runs c on after tv. -1 when c is
 * closed (and freed) instead: no memory for the timer. */
static int more_after(struct econn *c, const struct timeval *tv)
{
    if (econn_need_more(c)) {
        econn_close(c);                 /* it could never go on */
        return -1;
    }
    econn_read_off(c);
    event_add(c->more, tv);
    return 0;
}

/* A request waits for the clock (an AUTH's delay): the more timer runs it
 * on at s->wait_until, or as soon as the connection is dropped
 * (conns_drop_locked activates it). */
static void wait_timer(struct econn *c)
{
    uint64_t now = time_now_ns(), until = c->conn.session->wait_until;
    uint64_t us = until > now ? (until - now + 999) / 1000 : 0;
    struct timeval tv = { .tv_sec = (time_t)(us / 1000000),
                          .tv_usec = (suseconds_t)(us % 1000000) };

    if (more_after(c, &tv) == 0 && !c->conn.wake)
        conns_set_wake(&c->conn, c->more);
}

/* After a slice of requests, and after each thing the connection waited
 * for (the journal, the socket, its turn): sends what may leave, then
 * decides what to wait for next. more: complete requests may be buffered.
 * While replies wait for the journal, reading stays as it is: a client
 * with one request in flight sends nothing more, and a client that does
 * is stopped then (on_read), so the common case costs no epoll_ctl. */
void econn_settle(struct econn *c, int more)
{
    struct session *s = c->conn.session;

    assert(s);                          /* parked only where it waits for
                                           bytes (rest) */
    if (c->batched)
        econn_batch_out(c);             /* its copied reply first */
    int rc = c->hold_seq ? hold_over(c) : 0;

    if (rc == -EAGAIN)
        return;                         /* econn_on_journal comes back */
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
        econn_begin_closing(c);
    if (c->q.bytes) {                   /* on_write comes back */
        econn_read_off(c);
        write_on(c);
        return;
    }
    econn_write_off(c);
    if (c->state == ECONN_CLOSING) {
        econn_begin_linger(c);
    } else if (session_waiting(s) == SESSION_WAITS_COMPACT &&
               econn_need_jwait(c)) {
        econn_close(c);                 /* it could never be answered */
    } else if (session_waiting(s) == SESSION_WAITS_COMPACT &&
               journal_compact_wait_async(s->store->journal, &c->jw->cwaiter,
                                          s->compact_gen) == -EAGAIN) {
        return;                         /* econn_on_journal comes back */
    } else if (session_waiting(s) == SESSION_WAITS_ADMISSION) {
        econn_read_off(c);                    /* econn_on_granted comes back */
    } else if (session_waiting(s) == SESSION_WAITS_TIMER) {
        wait_timer(c);
    } else if (more || session_waiting(s) != SESSION_RUNS) {
        static const struct timeval now = { 0, 0 };
        static const struct timeval poll = { 0, ECONN_TRACE_POLL_US };
        /* The worker's other clients first, then the rest. A timer, not
         * event_active: an active event would run again in this same
         * pass of the loop, before the loop polls the sockets; an expired
         * timer waits for the next pass, after the poll. TRACE STOP's
         * file is asked after every few milliseconds instead: a waiter
         * list the writer would wake, and a closing connection leave,
         * is not worth it for an operator's request. */
        more_after(c, session_waiting(s) == SESSION_WAITS_TRACE
                      ? &poll : &now);
    } else {
        rest(c);                        /* idle: its buffers and session
                                           go back to the worker's pool */
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
    econn_settle(c, more);
}

void econn_received(struct econn *c, ssize_t n)
{
    if (n == -EAGAIN || n == -EINTR) {
        events_round_forget(c);
        rest(c);                        /* nothing came after all */
    } else if (n <= 0) {
        econn_close(c);
    } else {
        session_received_bytes(c->conn.session, (size_t)n);
    }
}

/* Complete requests may wait in the input buffer. */
int econn_input_left(const struct econn *c)
{
    return c->conn.session && lr_pending(&c->conn.session->in) > 0;
}

/* ---- the callbacks -------------------------------------------------------- */

void econn_on_more(evutil_socket_t fd, short what, void *arg)
{
    struct econn *c = arg;
    (void)fd; (void)what;

    if (c->conn.wake)
        conns_set_wake(&c->conn, NULL);
    if (atomic_load(&c->conn.dropped) != CONN_KEPT) {
        econn_close(c);                 /* its wait is not worth ending */
        return;
    }
    if (c->state == ECONN_OPEN)
        serve(c, 0);
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
    struct econn *c = arg;
    struct session *s = c->conn.session;
    size_t room;

    if (c->state == ECONN_LINGER) {
        econn_on_linger(c, what);
        return;
    }
    if (c->round_pp)
        return;                         /* its round comes first */
    if (c->hold_seq || c->q.bytes ||    /* more, or a timeout, while */
        (s && session_waiting(s) != SESSION_RUNS)) {    /* replies or a */
        econn_read_off(c);                    /* request wait: settle reads on */
        return;
    }
    if (what & EV_TIMEOUT) {
        c->idle = 1;                    /* --timeout */
        econn_close(c);
        return;
    }
    s = session_of(c);
    char *p = s ? session_recv_space(s, &room) : NULL;  /* borrows the
                                                           buffers */
    if (!p) {
        econn_close(c);                 /* no memory for them */
        return;
    }
    if (s->batch_max > 0 && events_batch(c->w)) {
        c->unread = 1;                  /* read with the pass's others, */
        events_round_add(c);            /* then answered with them */
        return;
    }
    ssize_t n = recv(fd, p, room, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        rest(c);                        /* nothing came after all */
        return;
    }
    if (n <= 0) {
        econn_close(c);
        return;
    }
    if (s->batch_max > 0) {             /* answered with the pass's others */
        session_received_bytes(s, (size_t)n);
        events_round_add(c);
        return;
    }
    serve(c, (size_t)n);
}

static void on_write(evutil_socket_t fd, short what, void *arg)
{
    struct econn *c = arg;

    if (what & EV_TIMEOUT) {
        assert(c->conn.session);        /* busy: replies are queued */
        c->conn.session->send_error = -EAGAIN;  /* --write-timeout */
        econn_close(c);
        return;
    }
    if (c->hold_seq) {                  /* cannot be: nothing is written */
        econn_write_off(c);                   /* while held (settle) */
        return;
    }
    ssize_t n = outq_send(&c->q, fd);
    if (n < 0 && n != -EAGAIN) {
        econn_close(c);
        return;
    }
    if (c->q.bytes == 0)
        econn_settle(c, c->state == ECONN_OPEN && econn_input_left(c));
}

/* The socket's event: for writing while c waits to write, else for
 * reading (its time-out too). */
static void on_socket(evutil_socket_t fd, short what, void *arg)
{
    struct econn *c = arg;

    if (c->writing)
        on_write(fd, what, arg);
    else
        on_read(fd, what, arg);
}

void econn_on_granted(evutil_socket_t fd, short what, void *arg)
{
    struct econn *c = arg;
    (void)fd; (void)what;

    session_begin_adopt(c->conn.session, &c->park->waiter);
    c->state = ECONN_OPEN;
    if (session_waiting(c->conn.session) == SESSION_WAITS_ADMISSION) {
        serve(c, 0);                    /* AUTH's OK, then the rest */
    } else {
        rest(c);
        read_on(c);
    }
}

void econn_begin(struct econn *c, struct event_base *base)
{
    int fd = c->conn.fd;

    c->ev = event_new(base, fd, EV_READ | EV_PERSIST, on_socket, c);
    if (!c->ev || econn_need_park(c)) {
        econn_close(c);
        return;
    }
    int rc = session_begin_nowait(c->conn.session, &c->park->waiter);
    if (rc == 0) {
        econn_drop_park(c);             /* not parked: made again by */
                                        /* econn_admit if AUTH parks */
        c->state = ECONN_OPEN;
        rest(c);
        read_on(c);
    } else if (rc == -EAGAIN) {
        c->state = ECONN_PARKED;        /* unread until its turn */
    } else {
        c->begin_error = rc;
        econn_close(c);
    }
}
