/* server.h -- state shared by every part of the server: the options it was
 * started with, the store, the counters STATS reports and the registry of
 * live connections used at shutdown.
 *
 * Locking: the store is protected as the lock policy says (lockmode.h); the
 * counters are atomics; the connection list is protected by conns_lock.
 */
#ifndef SSN_SERVER_H
#define SSN_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include "store.h"

#define SSN_VERSION         "0.1.0"
#define SSN_DEFAULT_PORT    7777    /* when neither -p nor PORT is given */
#define SSN_DEFAULT_MAX     1024    /* --max-clients */

struct options {
    const char *bind;           /* address to listen on */
    int port;                   /* 0: any free port */
    long max_clients;
    long race_window_us;        /* pause inside insert/erase; 0: none */
    int use_stdin;              /* serve one session on stdin/stdout */
    int quiet;                  /* no OK and Bye replies */
    int log_level;
    const char *log_file;       /* NULL: stderr */
};

struct session;

struct server {
    struct options opt;
    struct store store;         /* protected by the lock policy */
    struct timespec started;    /* CLOCK_MONOTONIC */

    atomic_long connections_current;
    atomic_long connections_total;
    atomic_long connections_rejected;
    atomic_long commands_total;
    atomic_long thread_failures;
    atomic_int stopping;        /* set once at shutdown */

    pthread_mutex_t conns_lock;
    pthread_cond_t conns_empty; /* signalled when the list empties */
    struct session *conns;      /* live sessions; protected by conns_lock */
};

extern struct server srv;

/* Seconds since start-up. */
long server_uptime(void);

/* conns.c: the registry of live sessions. register counts the connection;
 * unregister uncounts it and wakes a waiting shutdown. */
void conns_register(struct session *s);
void conns_unregister(struct session *s);
/* Shuts the read side of every live connection so each session ends after
 * its current request. */
void conns_stop_all(void);
/* Waits up to ms milliseconds for every session to end: 1 when they all
 * did, 0 on time-out. */
int conns_wait_empty(long ms);

#endif
