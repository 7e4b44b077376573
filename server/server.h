/* server.h -- state shared by every part of the server: the options it was
 * started with, the store, the counters STATS reports and the registry of
 * live connections used at shutdown.
 *
 * Locking: the store guards itself as its policy says (store.h,
 * lockmode.h); the counters are atomics; the connection registry is
 * protected by conns_lock, a leaf. Every lock of the server, what it
 * guards and the order they are taken in: the one lock table,
 * docs/ARCHITECTURE.md ("Locks").
 */
#ifndef SSN_SERVER_H
#define SSN_SERVER_H

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include "digest.h"
#include "store.h"
#include "version.h"

#define SSN_DEFAULT_PORT    7777    /* when neither -p nor PORT is given */
#define SSN_DEFAULT_MAX     1024    /* --max-clients */
#define SSN_DEFAULT_MAX_OUTPUT (64UL << 20) /* --max-output: a PRINT of 10^6
                                               people is about 51 MB */
#define SSN_DEFAULT_MAX_OUTPUT_TEXT "64m"
#define SSN_DEFAULT_BATCH   32      /* --batch: requests per store-lock hold */
#define SSN_DEFAULT_WRITE_TIMEOUT 60    /* --write-timeout, seconds */
#define SSN_LINGER_MS       2000    /* after QUIT, input is drained this
                                       long at most before the close */
#define SSN_LINGER_MIN      4       /* srv.linger_max: -m / 8, from this */
#define SSN_LINGER_MAX      64      /* to this: at most so many connections
                                       linger at once (or leave before their
                                       Bye, conns_leaving); the others
                                       close, or stay counted */
#define SSN_DEFAULT_LOGIN_GRACE 10  /* --login-grace, seconds */
#define SSN_DEFAULT_KEEPALIVE  300  /* --tcp-keepalive, seconds (Redis's) */
#define SSN_OUTPUT_TOTAL_SHARE   8  /* --max-output-total's default: this
                                       fraction of physical memory */

struct options {
    const char *bind;           /* address to listen on */
    int port;                   /* 0: any free port */
    long max_clients;           /* lowered at start-up to what the open-file
                                   limit allows */
    size_t max_output;          /* unsent reply bytes per client */
    size_t max_output_total;    /* ... over all clients; 0: no budget */
    long max_unauth;            /* connections not yet authenticated */
    long login_grace_s;         /* time to authenticate; 0: no limit */
    long tcp_keepalive_s;       /* 0: off */
    long idle_timeout_s;        /* --timeout; 0: none */
    long write_timeout_s;       /* --write-timeout; 0: none */
    long race_window_us;        /* pause inside insert/erase; 0: none */
    int use_stdin;              /* serve one session on stdin/stdout */
    int quiet;                  /* no OK and Bye replies */
    int log_level;
    const char *log_file;       /* NULL: stderr */
    const char *password_file;  /* NULL: no AUTH needed */
    int unprotected;            /* listen beyond loopback with no password */
    int core_dumps;             /* keep the inherited core file limit */
    int io_events;              /* --io events: the event-driven driver */
    int workers;                /* --workers for --io events */
    int batch;                  /* --batch: requests per store-lock hold */
    int lock_order;             /* --lock-order: enum store_lock_order */
    int sched_batch;            /* --sched batch: session threads of --io
                                   threads run as SCHED_BATCH */
    int uring;                  /* --uring on: event workers batch their
                                   socket calls through io_uring */
    int sched_given, workers_given, uring_given; /* so that the other
                                       model refuses them rather than
                                       ignore them */
    const char *journal;        /* --journal FILE; NULL: none */
    int fsync;                  /* --fsync, an enum journal_fsync */
    int journal_truncate;       /* --journal-truncate */
    int journal_wake;           /* --journal-wake, an enum journal_wake */
    size_t journal_compact_min; /* --journal-compact-min */
    int metrics_port;           /* --metrics-port; -1: none, 0: any free */
    const char *trace;          /* --trace FILE: traced from start-up */
    const char *trace_file;     /* --trace-file FILE: traced from TRACE
                                   START; NULL (and no --trace): never */
};

#define SSN_PEER_MAX 64          /* "[addr]:port" of a client, with NUL */

/* Why the server dropped a connection on its own (conns.c, budget.c):
 * set once, under conns_lock, by the thread that shuts the socket down;
 * read by the connection's own thread when its session ends. */
enum conn_dropped {
    CONN_KEPT,
    CONN_DROPPED_BUDGET,        /* held the most replies, over the budget */
    CONN_DROPPED_UNAUTH,        /* the oldest unauthenticated, at the cap */
    CONN_DROPPED_GRACE,         /* not authenticated within the grace */
};

/* One accepted connection, of either driver. fd, peer and born are set
 * before it is registered and never change; held is the reply memory it
 * holds (budget.c: atomic, changed by its own thread, read by anyone);
 * authed and dropped are atomics. */
struct event;

struct conn {
    int fd;
    uint32_t source;            /* its address's slot (conns.c) */
    char peer[SSN_PEER_MAX];    /* the client's address, for the log */
    struct session *session;
    uint64_t born;              /* time_now_ns() when registered */
    atomic_size_t held;         /* reply bytes held for it (budget.h) */
    atomic_int authed;          /* AUTH succeeded, or none is needed */
    atomic_int dropped;         /* an enum conn_dropped */
    struct conn *prev, *next;   /* srv.conns; protected by conns_lock */
    int over;                   /* session over, no longer counted
                                   (conns_session_over); under conns_lock,
                                   read also by the conn's own thread */
    int uncounted;              /* out of connections_current (and its
                                   --max-unauth place free): at its
                                   session's end, or when dropped before
                                   it authenticated; under conns_lock */
    int lingering;              /* counted in connections_lingering (after
                                   QUIT, or dropped and uncounted); the
                                   same */
    int is_socket;              /* the thread driver's: may hold replies */
    struct event *wake;         /* an event loop's timer that a drop
                                   activates (set while an AUTH answer
                                   waits, conns_set_wake); under
                                   conns_lock */
    /* The thread driver's replies held for the journal (journal.h,
     * struct journal_reply): made on the first durable reply of a socket
     * connection, its session thread's; NULL before, and for --stdin.
     * Whether the journal still holds some: journal_reply_held. */
    struct journal_reply *reply;
};

struct server {
    struct options opt;
    struct store store;         /* guarded as its policy says */
    struct timespec started;    /* CLOCK_MONOTONIC */

    atomic_long connections_current;    /* registered, session not over */
    atomic_long connections_lingering;  /* registered, lingering after QUIT */
    long linger_max;                    /* set once at start-up
                                           (limits_fit_fds) */
    atomic_long connections_total;
    atomic_long connections_rejected;
    atomic_long commands_total;
    atomic_long thread_failures;
    atomic_long clients_output_limited;
    atomic_long clients_idle_timeout;
    atomic_long clients_write_timeout;
    atomic_long accept_fd_exhausted;    /* episodes of EMFILE/ENFILE */
    atomic_long auth_failures;
    atomic_long auth_closed;            /* closed after too many failures */
    atomic_long clients_reply_budget;   /* dropped: --max-output-total */
    atomic_long clients_unauth_dropped; /* dropped: --max-unauth */
    atomic_long clients_login_timeout;  /* dropped: --login-grace */
    atomic_long connections_unauth;     /* registered, not authenticated */
    atomic_size_t reply_held;           /* sum of every conn's held */
    atomic_long connections_reset;      /* connections_total and */
    atomic_long commands_reset;         /* commands_total before each
                                           STATS RESET, summed */

    /* --password-file: the SHA-256 of the password, in hex; set once at
     * start-up. AUTH compares digests, so the time taken does not depend
     * on how much of a guess is right (or on its length). */
    int auth_required;
    char password_hex[DIGEST_HEX_LEN + 1];

    atomic_int stopping;        /* shutting down: sessions end quietly */
    atomic_int sched_refused;   /* --sched batch: the kernel said no */
    atomic_int uring_workers;   /* event workers with an io_uring */
    atomic_ullong uring_calls;  /* recv and send calls they made in */
    atomic_ullong uring_enters; /* ... so many io_uring_enter(2)s */

    pthread_mutex_t conns_lock;
    pthread_cond_t conns_empty; /* signalled when the list empties */
    struct conn *conns;         /* live connections; protected by conns_lock */
};

extern struct server srv;

/* 1 on an event worker's thread (events.c), which must never block: what
 * may (a blocking journal wait, a blocking compaction wait) asserts it is
 * not there. fine's streamed PRINT, writing under the store lock, is the
 * one wait a worker makes (econn.c's econn_send_locked). */
extern _Thread_local int srv_on_event_loop;
#define SRV_ASSERT_MAY_BLOCK() assert(!srv_on_event_loop)

/* Seconds since start-up. */
long server_uptime(void);

/* How the session threads are scheduled, as STATS and /metrics say it:
 * "batch" (--io threads with --sched batch) or "normal". */
const char *server_sched_name(void);

/* Whether the event workers batch their socket calls, as STATS says it:
 * "on", "off" (--uring off, or --io threads) or "unavailable" (the
 * kernel would not give a worker a ring; the log says why, once). */
const char *server_uring_name(void);

/* 1 when the len bytes at secret are the --password-file password: AUTH's
 * check and /metrics'. Compares SHA-256 digests with CRYPTO_memcmp, so its
 * time does not depend on the guess; d is the caller's digest context.
 * 0 without a password. */
int server_password_ok(struct digest *d, const void *secret, size_t len);

/* conns.c: the registry of live connections. register counts the
 * connection; unregister, before its close, takes it off the list (and
 * uncounts it, unless conns_session_over did) and wakes a waiting
 * shutdown once the list is empty. */
void conns_register(struct conn *c);
void conns_unregister(struct conn *c);
/* c's session is ending (QUIT, an output limit, a failed send): its
 * --max-clients and --max-unauth place is free from now, before its last
 * replies leave, so that a client that connects on reading Bye is not
 * refused for it (conns_session_over would free it a moment later). Until
 * its close it is one of the srv.linger_max on their way out; when that
 * many are, or when c has not authenticated, nothing changes. c is
 * registered (not --stdin's). */
void conns_leaving(struct conn *c);

/* A connection's session is over (once for it): logs it (unless the
 * server is stopping), uncounts it (its --max-clients and --max-unauth
 * place is free) and tells the lock policy, which may let the listener
 * accept again. It stays registered until conns_unregister, before its
 * close. linger: it would linger after QUIT (drain its client's input for
 * up to SSN_LINGER_MS); 1 when it may, counted in connections_lingering,
 * 0 when srv.linger_max connections linger already and it must close
 * now. */
int conns_session_over(struct conn *c, int linger);
/* Shuts the read side of every live connection so each session ends after
 * its current request. */
void conns_stop_all(void);
/* Waits up to ms milliseconds for every session to end: 1 when they all
 * did, 0 on time-out. */
int conns_wait_empty(long ms);
/* Why c's session ended, in the log and in STATS: idle (--timeout), over
 * the output limit, a write timeout, or begin_error (-errno) when it could
 * not begin. Nothing for an ordinary end. c->session may be NULL (an
 * event connection's, parked while idle: none of those). */
void conns_note_end(const struct conn *c, int idle, int begin_error);
/* c's session authenticated: it no longer counts against --max-unauth. On
 * c's own thread. */
void conns_authed(struct conn *c);
/* Before a new connection is registered: when --max-unauth connections
 * already wait for AUTH, the oldest of them is dropped, so a client with
 * the password always gets in (sshd's MaxStartups, oldest first). */
void conns_make_room(void);
/* Drops every connection that has not authenticated within
 * --login-grace; the listener calls it each second. */
void conns_reap_unauthed(void);
/* Shuts c's socket down for why (an enum conn_dropped), unless it was
 * already dropped; conns_lock held. Its own thread then ends it. One not
 * authenticated leaves --max-clients at once (while fewer than
 * srv.linger_max connections are on their way out), and an AUTH delay it
 * waits in ends (a thread's poll sees the hang-up; an event loop's timer
 * is activated). */
void conns_drop_locked(struct conn *c, int why);
/* c's event loop timer for conns_drop_locked to activate (NULL: none),
 * set and cleared on c's own thread. */
void conns_set_wake(struct conn *c, struct event *ev);

#endif
