/* conns.c -- the registry of live connections (server.h), used for the
 * connection counters and to end every session at shutdown. conns_lock
 * protects srv.conns and every session's prev/next. */
#include <errno.h>
#include <sys/socket.h>
#include "server.h"
#include "session.h"

void conns_register(struct session *s)
{
    pthread_mutex_lock(&srv.conns_lock);
    s->prev = NULL;
    s->next = srv.conns;
    if (srv.conns)
        srv.conns->prev = s;
    srv.conns = s;
    atomic_fetch_add(&srv.connections_current, 1);
    atomic_fetch_add(&srv.connections_total, 1);
    pthread_mutex_unlock(&srv.conns_lock);
}

void conns_unregister(struct session *s)
{
    pthread_mutex_lock(&srv.conns_lock);
    if (s->prev)
        s->prev->next = s->next;
    else
        srv.conns = s->next;
    if (s->next)
        s->next->prev = s->prev;
    atomic_fetch_sub(&srv.connections_current, 1);
    if (!srv.conns)
        pthread_cond_signal(&srv.conns_empty);  /* one waiter: main */
    pthread_mutex_unlock(&srv.conns_lock);
}

void conns_stop_all(void)
{
    pthread_mutex_lock(&srv.conns_lock);
    for (struct session *s = srv.conns; s; s = s->next)
        shutdown(s->rfd, SHUT_RD);
    pthread_mutex_unlock(&srv.conns_lock);
}

int conns_wait_empty(long ms)
{
    struct timespec deadline;
    int rc = 0;

    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += ms / 1000;
    deadline.tv_nsec += (ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&srv.conns_lock);
    while (srv.conns && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&srv.conns_empty, &srv.conns_lock,
                                    &deadline);
    int empty = srv.conns == NULL;
    pthread_mutex_unlock(&srv.conns_lock);
    return empty;
}
