/* conns.c -- the registry of live connections (server.h), used for the
 * connection counters, to end every session at shutdown, to bound the
 * connections lingering after QUIT, and to keep connections that have not
 * authenticated second-class: at most --max-unauth of them (for a new
 * one, the oldest of the address that holds the most is dropped) and each
 * for at most --login-grace seconds. conns_lock protects srv.conns, every
 * conn's prev/next, over, uncounted, lingering and wake. */
#include <assert.h>
#include <errno.h>
#include <sys/socket.h>
#include <string.h>
#include <event2/event.h>
#include "listener.h"
#include "lockmode.h"
#include "log.h"
#include "log_source.h"
#include "server.h"
#include "session.h"
#include "source.h"
#include "timeutil.h"

/* Unauthenticated connections per source address (by hash slot; two
 * addresses that collide share one): past --max-unauth, the one to drop
 * is the oldest of the address holding the most, so a flood from one
 * address pushes out its own connections, not a client's from elsewhere.
 * Atomics: changed by each connection's own thread. */
#define CONNS_SOURCE_SLOTS 4096
static atomic_int unauth_of_source[CONNS_SOURCE_SLOTS];

void conns_register(struct conn *c)
{
    c->source = source_hash(c->peer) % CONNS_SOURCE_SLOTS;
    c->born = time_now_ns();
    atomic_init(&c->held, 0);
    atomic_init(&c->authed, !srv.auth_required);
    atomic_init(&c->dropped, CONN_KEPT);
    c->over = 0;
    c->uncounted = 0;
    c->lingering = 0;
    c->wake = NULL;
    if (srv.auth_required) {
        atomic_fetch_add(&srv.connections_unauth, 1);
        atomic_fetch_add(&unauth_of_source[c->source], 1);
    }
    pthread_mutex_lock(&srv.conns_lock);
    c->prev = NULL;
    c->next = srv.conns;
    if (srv.conns)
        srv.conns->prev = c;
    srv.conns = c;
    atomic_fetch_add(&srv.connections_current, 1);
    atomic_fetch_add(&srv.connections_total, 1);
    pthread_mutex_unlock(&srv.conns_lock);
}

/* c no longer counts against --max-clients nor --max-unauth, once;
 * conns_lock held. Its --max-unauth place is claimed with the exchange
 * conns_authed makes on c's own thread: a dropped connection's right
 * AUTH cannot free it a second time. */
static void uncount_locked(struct conn *c)
{
    if (c->uncounted)
        return;
    c->uncounted = 1;
    atomic_fetch_sub(&srv.connections_current, 1);
    if (!atomic_exchange(&c->authed, 1)) {
        atomic_fetch_sub(&srv.connections_unauth, 1);
        atomic_fetch_sub(&unauth_of_source[c->source], 1);
    }
}

/* c becomes one of the srv.linger_max on their way out (lingering after
 * QUIT, leaving before its Bye, or dropped before AUTH), each holding a
 * descriptor until its close, and no longer counted against -m: once, and
 * only while fewer than that many are. 1 when it is one; conns_lock held. */
static int way_out_locked(struct conn *c)
{
    if (!c->lingering &&
        atomic_load(&srv.connections_lingering) < srv.linger_max) {
        uncount_locked(c);
        c->lingering = 1;
        atomic_fetch_add(&srv.connections_lingering, 1);
    }
    return c->lingering;
}

void conns_leaving(struct conn *c)
{
    /* One that has not authenticated stays counted, and under
     * --login-grace and --max-unauth (uncounting would mark it done with
     * them): a client without the password whose Bye cannot leave would
     * hold a place for --write-timeout. */
    pthread_mutex_lock(&srv.conns_lock);
    if (!c->over && !c->uncounted && atomic_load(&c->authed))
        way_out_locked(c);
    pthread_mutex_unlock(&srv.conns_lock);
}

int conns_session_over(struct conn *c, int linger)
{
    struct store *st = &srv.store;

    if (!atomic_load(&srv.stopping))
        log_msg(LOG_LEVEL_DEBUG, "connection from %s closed", c->peer);
    pthread_mutex_lock(&srv.conns_lock);
    assert(!c->over);                   /* once a connection */
    c->over = 1;
    uncount_locked(c);                  /* unless a drop did */
    if (atomic_load(&c->dropped) != CONN_KEPT) {
        linger = 0;                     /* owed nothing; lingering already
                                           when its drop freed its place */
    } else if (linger) {
        linger = way_out_locked(c);     /* or conns_leaving's place */
    }
    pthread_mutex_unlock(&srv.conns_lock);
    if (st->policy->dismiss(st) == LOCK_ADMIT_MORE)
        listener_resume();
    return linger;
}

void conns_unregister(struct conn *c)
{
    pthread_mutex_lock(&srv.conns_lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        srv.conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    uncount_locked(c);
    if (c->lingering)
        atomic_fetch_sub(&srv.connections_lingering, 1);
    if (!srv.conns)
        pthread_cond_signal(&srv.conns_empty);  /* one waiter: main */
    pthread_mutex_unlock(&srv.conns_lock);
}

void conns_stop_all(void)
{
    pthread_mutex_lock(&srv.conns_lock);
    for (struct conn *c = srv.conns; c; c = c->next)
        shutdown(c->fd, SHUT_RD);
    pthread_mutex_unlock(&srv.conns_lock);
}

int conns_wait_empty(long ms)
{
    struct timespec deadline = time_mono_after_ns((uint64_t)ms * TIME_NS_PER_MS);
    int rc = 0;

    pthread_mutex_lock(&srv.conns_lock);
    while (srv.conns && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&srv.conns_empty, &srv.conns_lock,
                                    &deadline);
    int empty = srv.conns == NULL;
    pthread_mutex_unlock(&srv.conns_lock);
    return empty;
}

void conns_authed(struct conn *c)
{
    if (!atomic_exchange(&c->authed, 1)) {
        atomic_fetch_sub(&srv.connections_unauth, 1);
        atomic_fetch_sub(&unauth_of_source[c->source], 1);
    }
}

void conns_drop_locked(struct conn *c, int why)
{
    int kept = CONN_KEPT;

    if (!atomic_compare_exchange_strong(&c->dropped, &kept, why))
        return;
    atomic_fetch_add(why == CONN_DROPPED_BUDGET ? &srv.clients_reply_budget
                     : why == CONN_DROPPED_UNAUTH
                       ? &srv.clients_unauth_dropped
                       : &srv.clients_login_timeout, 1);
    /* Not authenticated: its place is free now, as after QUIT, for the
     * client with the password that may be the next to connect; until
     * its close it is one of the srv.linger_max on their way out (in the
     * descriptor limit), or counted as before when that many are. */
    if (why != CONN_DROPPED_BUDGET && !c->over)
        way_out_locked(c);
    shutdown(c->fd, SHUT_RDWR);     /* a blocked read or write returns, a
                                       thread's AUTH delay ends (POLLHUP) */
    if (c->wake)                    /* an event loop's AUTH delay ends */
        event_active(c->wake, EV_TIMEOUT, 1);
}

void conns_set_wake(struct conn *c, struct event *ev)
{
    pthread_mutex_lock(&srv.conns_lock);
    c->wake = ev;
    if (ev && atomic_load(&c->dropped) != CONN_KEPT)
        event_active(ev, EV_TIMEOUT, 1);    /* dropped before it was set */
    pthread_mutex_unlock(&srv.conns_lock);
}

/* Not authenticated, and not on its way out already; conns_lock held. */
static int waits_for_auth(const struct conn *c)
{
    return !atomic_load(&c->authed) && !c->over &&
           atomic_load(&c->dropped) == CONN_KEPT;
}

/* The connection to drop for room: of those waiting for AUTH, one of the
 * address that has the most, and of those the oldest (the list is newest
 * first). conns_lock held. */
static struct conn *drop_candidate_locked(void)
{
    struct conn *pick = NULL;
    int most = 0;

    for (struct conn *c = srv.conns; c; c = c->next) {
        int n = atomic_load(&unauth_of_source[c->source]);
        if (waits_for_auth(c) && n >= most) {
            most = n;
            pick = c;
        }
    }
    return pick;
}

void conns_make_room(void)
{
    if (!srv.auth_required ||
        atomic_load(&srv.connections_unauth) < srv.opt.max_unauth)
        return;
    pthread_mutex_lock(&srv.conns_lock);
    /* Those already dropped still count until their threads end them:
     * count only the ones still waiting. */
    long waiting = 0;
    for (struct conn *c = srv.conns; c; c = c->next)
        waiting += waits_for_auth(c);
    while (waiting-- >= srv.opt.max_unauth) {
        struct conn *c = drop_candidate_locked();
        if (!c)
            break;
        conns_drop_locked(c, CONN_DROPPED_UNAUTH);
    }
    pthread_mutex_unlock(&srv.conns_lock);
}

void conns_reap_unauthed(void)
{
    uint64_t grace = (uint64_t)srv.opt.login_grace_s * TIME_NS_PER_SEC;
    uint64_t now = time_now_ns();

    if (!srv.auth_required || !grace ||
        atomic_load(&srv.connections_unauth) == 0)
        return;
    pthread_mutex_lock(&srv.conns_lock);
    for (struct conn *c = srv.conns; c; c = c->next)
        if (waits_for_auth(c) && now - c->born >= grace)
            conns_drop_locked(c, CONN_DROPPED_GRACE);
    pthread_mutex_unlock(&srv.conns_lock);
}

/* The server dropped c on its own: the log says why. */
static void note_dropped(const struct conn *c, int why)
{
    if (why == CONN_DROPPED_BUDGET)
        log_source(LOG_LEVEL_WARN, c->peer, "disconnected %s: all clients "
                   "together held more replies than --max-output-total "
                   "(%zu bytes), and it held the most", c->peer,
                   srv.opt.max_output_total);
    else if (why == CONN_DROPPED_UNAUTH)
        log_source(LOG_LEVEL_WARN, c->peer, "disconnected %s: not "
                   "authenticated, the oldest of %ld such connections "
                   "(--max-unauth)", c->peer, srv.opt.max_unauth);
    else
        log_source(LOG_LEVEL_WARN, c->peer, "disconnected %s: not "
                   "authenticated within %ld s (--login-grace)", c->peer,
                   srv.opt.login_grace_s);
}

void conns_note_end(const struct conn *c, int idle, int begin_error)
{
    const struct session *s = c->session;
    int why = atomic_load(&c->dropped);

    if (why != CONN_KEPT) {
        note_dropped(c, why);
    } else if (idle) {
        atomic_fetch_add(&srv.clients_idle_timeout, 1);
        log_msg(LOG_LEVEL_INFO, "closed %s: idle for %ld s", c->peer,
                srv.opt.idle_timeout_s);
    } else if (s && (s->output_limited || s->send_error == -ENOBUFS)) {
        atomic_fetch_add(&srv.clients_output_limited, 1);
        log_source(LOG_LEVEL_WARN, c->peer, "disconnected %s: over the "
                   "output limit of %zu bytes", c->peer, srv.opt.max_output);
    } else if (s && (s->send_error == -EAGAIN ||
                     s->send_error == -EWOULDBLOCK)) {
        atomic_fetch_add(&srv.clients_write_timeout, 1);
        log_source(LOG_LEVEL_WARN, c->peer, "ended the session of %s: it "
                   "read nothing for %ld s", c->peer,
                   srv.opt.write_timeout_s);
    } else if (begin_error) {
        log_msg(LOG_LEVEL_ERROR, "session of %s could not begin: %s",
                c->peer, strerror(-begin_error));
    }
}
