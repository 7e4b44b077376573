/* conns.c -- the registry of live connections (server.h), used for the
 * connection counters and to end every session at shutdown. conns_lock
 * protects srv.conns and every conn's prev/next. */
#include <errno.h>
#include <sys/socket.h>
#include <string.h>
#include "listener.h"
#include "lockmode.h"
#include "log.h"
#include "server.h"
#include "session.h"
#include "timeutil.h"

void conns_register(struct conn *c)
{
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

void conns_release(struct conn *c)
{
    struct store *st = &srv.store;

    if (!atomic_load(&srv.stopping))
        log_msg(LOG_LEVEL_DEBUG, "connection from %s closed", c->peer);
    conns_unregister(c);
    if (st->policy->dismiss(st) == LOCK_ADMIT_MORE)
        listener_resume();
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
    atomic_fetch_sub(&srv.connections_current, 1);
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

void conns_note_end(const struct conn *c, int idle, int begin_error)
{
    const struct session *s = c->session;

    if (idle) {
        atomic_fetch_add(&srv.clients_idle_timeout, 1);
        log_msg(LOG_LEVEL_INFO, "closed %s: idle for %ld s", c->peer,
                srv.opt.idle_timeout_s);
    } else if (s->output_limited || s->send_error == -ENOBUFS) {
        atomic_fetch_add(&srv.clients_output_limited, 1);
        log_msg(LOG_LEVEL_WARN, "disconnected %s: over the output limit "
                "of %zu bytes", c->peer, srv.opt.max_output);
    } else if (s->send_error == -EAGAIN || s->send_error == -EWOULDBLOCK) {
        atomic_fetch_add(&srv.clients_write_timeout, 1);
        log_msg(LOG_LEVEL_WARN, "ended the session of %s: it read nothing "
                "for %ld s", c->peer, srv.opt.write_timeout_s);
    } else if (begin_error) {
        log_msg(LOG_LEVEL_ERROR, "session of %s could not begin: %s",
                c->peer, strerror(-begin_error));
    }
}
