/* listener.c -- accepting connections (listener.h). The listener is
 * libevent's, created LEV_OPT_THREADSAFE so a session thread may resume it
 * when the lock policy paused admission (serial mode). */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <event2/listener.h>
#include "fdio.h"
#include "listener.h"
#include "lockmode.h"
#include "log.h"
#include "log_source.h"
#include "proto.h"
#include "server.h"
#include "events.h"
#include "threads.h"

#define LISTEN_BACKLOG  4096    /* the kernel caps it at somaxconn */
#define BACKOFF_MIN_MS  10      /* first pause after running out of fds */
#define BACKOFF_MAX_MS  1000    /* the pause doubles up to this */

/* Why accepting is paused; accepting goes on when no reason is left. */
enum {
    PAUSE_ADMIT = 1,            /* the lock policy's admission (serial) */
    PAUSE_FDS = 2,              /* out of descriptors: backing off */
};

/* listener_lock protects listener and paused against a session thread
 * resuming the listener while the main thread frees it at shutdown. */
static pthread_mutex_t listener_lock = PTHREAD_MUTEX_INITIALIZER;
static struct evconnlistener *listener;
static int paused;                      /* PAUSE_* bits */

/* The descriptor back-off; only the main thread (libevent's callbacks)
 * touches these. */
static struct event *backoff_timer;
static struct event *guard_timer;       /* each second: --login-grace,
                                           threads_reap */
static long backoff_ms;                 /* 0: not in an episode */
static long backoff_failures;           /* failed accepts this episode */

/* Says why, then closes. Input already received is read first: closing
 * with unread input makes the kernel reset the connection, and the reset
 * can destroy the line before the client reads it. At most REFUSE_DRAIN
 * bytes: on the main thread, a client sending without pause must not keep
 * it here. */
#define REFUSE_DRAIN (64 * 1024)
static void refuse(int fd, const char *line)
{
    char junk[4096];

    fd_write_all(fd, line, strlen(line));
    shutdown(fd, SHUT_WR);
    for (size_t n = 0; n < REFUSE_DRAIN; n += sizeof(junk))
        if (recv(fd, junk, sizeof(junk), MSG_DONTWAIT) <= 0)
            break;
    close(fd);
}

/* Connections that arrive while paused wait, unaccepted, in the backlog. */
static void pause_accepting(int why)
{
    pthread_mutex_lock(&listener_lock);
    if (listener && !paused)
        evconnlistener_disable(listener);
    paused |= why;
    pthread_mutex_unlock(&listener_lock);
}

static void resume_accepting(int why)
{
    pthread_mutex_lock(&listener_lock);
    if (listener && paused && !(paused &= ~why))
        evconnlistener_enable(listener);
    pthread_mutex_unlock(&listener_lock);
}

void listener_resume(void)
{
    resume_accepting(PAUSE_ADMIT);
}

static void backoff_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd; (void)what; (void)arg;
    resume_accepting(PAUSE_FDS);        /* try again */
}

/* An accept succeeded: a descriptor episode, if any, is over. */
static void backoff_end(void)
{
    if (!backoff_ms)
        return;
    log_msg(LOG_LEVEL_INFO, "accepting again, after %ld failed attempts",
            backoff_failures);
    backoff_ms = 0;
    backoff_failures = 0;
}

void listener_format_peer(const struct sockaddr *sa, char *out, size_t cap)
{
    char host[INET6_ADDRSTRLEN] = "?";

    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)sa;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
        snprintf(out, cap, "[%s]:%d", host, ntohs(a->sin6_port));
    } else {
        const struct sockaddr_in *a = (const void *)sa;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
        snprintf(out, cap, "%s:%d", host, ntohs(a->sin_port));
    }
}

/* --tcp-keepalive: after that long without a byte the kernel probes the
 * peer, three times a third of it apart (Redis's choice), and a peer that
 * vanished without a FIN is found: its session's read fails and the
 * connection is freed. */
static void set_keepalive(int fd)
{
    int on = 1, idle = (int)srv.opt.tcp_keepalive_s;
    int interval = idle / 3 > 0 ? idle / 3 : 1, count = 3;

    if (!idle)
        return;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
}

static void guard_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd; (void)what; (void)arg;
    conns_reap_unauthed();
    threads_reap();                     /* ended session threads, when no
                                           accept came to do it */
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd,
                      struct sockaddr *sa, int socklen, void *arg)
{
    struct store *st = &srv.store;
    char peer[SSN_PEER_MAX];
    int one = 1, rc;

    (void)l; (void)socklen; (void)arg;
    backoff_end();
    listener_format_peer(sa, peer, sizeof(peer));
    if (atomic_load(&srv.connections_current) >= srv.opt.max_clients) {
        atomic_fetch_add(&srv.connections_rejected, 1);
        log_source(LOG_LEVEL_WARN, peer, "refused %s: --max-clients %ld "
                   "reached", peer, srv.opt.max_clients);
        refuse(fd, "Error: too many connections\n");
        return;
    }
    /* Replies are batched by the session, so Nagle would only add delay. */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    set_keepalive(fd);
    conns_make_room();                  /* --max-unauth */

    if (st->policy->admit(st) == LOCK_ADMIT_PAUSE)
        pause_accepting(PAUSE_ADMIT);
    if (!srv.opt.io_events)
        threads_reap();
    rc = srv.opt.io_events ? events_start(fd, peer) : threads_start(fd, peer);
    if (rc == 0) {
        log_msg(LOG_LEVEL_DEBUG, "connection from %s (fd %d)", peer, fd);
        return;
    }
    if (rc == -ENOMEM) {
        log_msg(LOG_LEVEL_ERROR, "refused %s: out of memory", peer);
        refuse(fd, PROTO_ERR_NOMEM_LINE);
    } else {
        atomic_fetch_add(&srv.thread_failures, 1);
        log_msg(LOG_LEVEL_ERROR, "refused %s: cannot start a session "
                "thread: %s", peer, strerror(-rc));
        refuse(fd, "Error: server busy: cannot start a thread\n");
    }
    if (st->policy->dismiss(st) == LOCK_ADMIT_MORE)
        listener_resume();
}

/* Out of descriptors (or kernel memory), accept fails at once and the
 * listening socket stays readable: retrying straight away would spin. So
 * stop accepting, try again after a pause that doubles while the failures
 * go on, and log once per episode, not once per attempt. */
static void accept_error_cb(struct evconnlistener *l, void *arg)
{
    int err = EVUTIL_SOCKET_ERROR();
    struct timeval tv;
    (void)l; (void)arg;

    backoff_failures++;
    if (!backoff_ms) {
        atomic_fetch_add(&srv.accept_fd_exhausted, 1);
        log_msg(LOG_LEVEL_WARN, "accept failed: %s; pausing new "
                "connections until it succeeds again (%ld clients connected)",
                evutil_socket_error_to_string(err),
                atomic_load(&srv.connections_current));
        backoff_ms = BACKOFF_MIN_MS;
    } else if (backoff_ms < BACKOFF_MAX_MS) {
        backoff_ms = backoff_ms * 2 < BACKOFF_MAX_MS ? backoff_ms * 2
                                                     : BACKOFF_MAX_MS;
    }
    pause_accepting(PAUSE_FDS);
    tv.tv_sec = backoff_ms / 1000;
    tv.tv_usec = (backoff_ms % 1000) * 1000;
    evtimer_add(backoff_timer, &tv);
}

void listener_print_address(const char *what, int fd)
{
    struct sockaddr_storage bound;
    socklen_t blen = sizeof(bound);
    const struct sockaddr *sa = (const struct sockaddr *)&bound;
    char host[INET6_ADDRSTRLEN] = "?";

    getsockname(fd, (struct sockaddr *)&bound, &blen);
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)sa;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
        printf("%s [%s]:%d\n", what, host, ntohs(a->sin6_port));
    } else {
        const struct sockaddr_in *a = (const void *)sa;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
        printf("%s %s:%d\n", what, host, ntohs(a->sin_port));
    }
    fflush(stdout);
}

static int is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)sa;
        return IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
    }
    const struct sockaddr_in *a = (const void *)sa;
    return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
}

/* Protected mode (Redis's idea): this server holds SSNs, so it listens
 * beyond loopback only with a password, or when told --unprotected. */
static int protected_mode_allows(const struct sockaddr *sa, const char *what)
{
    if (is_loopback(sa) || srv.auth_required)
        return 1;
    if (srv.opt.unprotected) {
        log_msg(LOG_LEVEL_WARN, "listening on %s with NO password "
                "(--unprotected): anyone who can reach it can read and "
                "delete every SSN", srv.opt.bind);
        return 1;
    }
    fprintf(stderr, "ssnserver: refusing to listen on %s%s%s without a "
            "password: anyone who can reach it could read and delete every "
            "SSN. Add --password-file FILE (or --unprotected to do it "
            "anyway).\n", srv.opt.bind, what ? " for " : "",
            what ? what : "");
    return 0;
}

int listener_address(const char *what, int port, struct addrinfo **ai)
{
    struct addrinfo hints = { .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
                              .ai_socktype = SOCK_STREAM };
    char service[8];
    int rc;

    snprintf(service, sizeof(service), "%d", port);
    rc = getaddrinfo(srv.opt.bind, service, &hints, ai);
    if (rc) {
        fprintf(stderr, "ssnserver: %s%scannot use address %s: %s\n",
                what ? what : "", what ? ": " : "", srv.opt.bind,
                gai_strerror(rc));
        return -1;
    }
    if (!protected_mode_allows((*ai)->ai_addr, what)) {
        freeaddrinfo(*ai);
        return -1;
    }
    return 0;
}

/* Makes the listener on srv.opt.bind:port; prints why not on stderr. */
static struct evconnlistener *bind_listener(struct event_base *base)
{
    struct addrinfo *ai;
    struct evconnlistener *l;

    if (listener_address(NULL, srv.opt.port, &ai))
        return NULL;
    l = evconnlistener_new_bind(base, accept_cb, NULL,
        LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC |
        LEV_OPT_LEAVE_SOCKETS_BLOCKING | LEV_OPT_THREADSAFE,
        LISTEN_BACKLOG, ai->ai_addr, (int)ai->ai_addrlen);
    freeaddrinfo(ai);
    if (!l)
        fprintf(stderr, "ssnserver: cannot listen on %s port %d: %s\n",
                srv.opt.bind, srv.opt.port, strerror(errno));
    return l;
}

int listener_start(struct event_base *base)
{
    int rc = threads_init();

    if (rc) {
        fprintf(stderr, "ssnserver: cannot set up threads: %s\n",
                strerror(-rc));
        return -1;
    }
    static const struct timeval second = { 1, 0 };
    backoff_timer = evtimer_new(base, backoff_cb, NULL);
    guard_timer = event_new(base, -1, EV_PERSIST, guard_cb, NULL);
    if (!backoff_timer || !guard_timer) {
        fprintf(stderr, "ssnserver: cannot make a timer\n");
        return -1;
    }
    if ((srv.auth_required && srv.opt.login_grace_s) || !srv.opt.io_events)
        event_add(guard_timer, &second);
    struct evconnlistener *l = bind_listener(base);
    if (!l)
        return -1;
    evconnlistener_set_error_cb(l, accept_error_cb);
    pthread_mutex_lock(&listener_lock);
    listener = l;
    pthread_mutex_unlock(&listener_lock);

    listener_print_address("listening on", evconnlistener_get_fd(l));
    return 0;
}

void listener_stop(void)
{
    pthread_mutex_lock(&listener_lock);
    if (listener)
        evconnlistener_free(listener);
    listener = NULL;
    pthread_mutex_unlock(&listener_lock);
    if (backoff_timer)
        event_free(backoff_timer);
    backoff_timer = NULL;
    if (guard_timer)
        event_free(guard_timer);
    guard_timer = NULL;
}
