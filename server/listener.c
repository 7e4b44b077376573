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
#include "proto.h"
#include "server.h"
#include "threads.h"

#define LISTEN_BACKLOG  1024

/* listener_lock protects listener and paused against a session thread
 * resuming the listener while the main thread frees it at shutdown. */
static pthread_mutex_t listener_lock = PTHREAD_MUTEX_INITIALIZER;
static struct evconnlistener *listener;
static int paused;

static void refuse(int fd, const char *line)
{
    fd_write_all(fd, line, strlen(line));
    close(fd);
}

static void pause_accepting(void)
{
    pthread_mutex_lock(&listener_lock);
    if (listener && !paused) {
        evconnlistener_disable(listener);   /* the rest wait in the backlog */
        paused = 1;
    }
    pthread_mutex_unlock(&listener_lock);
}

void listener_resume(void)
{
    pthread_mutex_lock(&listener_lock);
    if (listener && paused) {
        evconnlistener_enable(listener);
        paused = 0;
    }
    pthread_mutex_unlock(&listener_lock);
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd,
                      struct sockaddr *sa, int socklen, void *arg)
{
    struct store *st = &srv.store;
    int one = 1, rc;

    (void)l; (void)sa; (void)socklen; (void)arg;
    if (atomic_load(&srv.connections_current) >= srv.opt.max_clients) {
        atomic_fetch_add(&srv.connections_rejected, 1);
        log_msg(LOG_LEVEL_WARN, "refused a connection: %ld clients connected",
                srv.opt.max_clients);
        refuse(fd, "Error: too many connections\n");
        return;
    }
    /* Replies are batched by the session, so Nagle would only add delay. */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

    if (st->policy->admit(st) == LOCK_ADMIT_PAUSE)
        pause_accepting();
    rc = threads_start(fd);
    if (rc == 0) {
        log_msg(LOG_LEVEL_DEBUG, "connection accepted (fd %d)", fd);
        return;
    }
    if (rc == -ENOMEM) {
        log_msg(LOG_LEVEL_ERROR, "refused a connection: out of memory");
        refuse(fd, PROTO_ERR_NOMEM_LINE);
    } else {
        atomic_fetch_add(&srv.thread_failures, 1);
        log_msg(LOG_LEVEL_ERROR, "cannot start a session thread: %s",
                strerror(-rc));
        refuse(fd, "Error: server busy: cannot start a thread\n");
    }
    if (st->policy->dismiss(st) == LOCK_ADMIT_MORE)
        listener_resume();
}

static void accept_error_cb(struct evconnlistener *l, void *arg)
{
    int err = EVUTIL_SOCKET_ERROR();
    (void)l; (void)arg;
    /* EMFILE and friends: log and carry on; the next accept may succeed. */
    log_msg(LOG_LEVEL_WARN, "accept failed: %s",
            evutil_socket_error_to_string(err));
}

static void print_address(const struct sockaddr *sa)
{
    char host[INET6_ADDRSTRLEN];

    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)sa;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
        printf("listening on [%s]:%d\n", host, ntohs(a->sin6_port));
    } else {
        const struct sockaddr_in *a = (const void *)sa;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
        printf("listening on %s:%d\n", host, ntohs(a->sin_port));
    }
    fflush(stdout);
}

/* Makes the listener on srv.opt.bind:port; prints why not on stderr. */
static struct evconnlistener *bind_listener(struct event_base *base)
{
    struct addrinfo hints = { .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
                              .ai_socktype = SOCK_STREAM };
    struct addrinfo *ai;
    struct evconnlistener *l;
    char port[8];
    int rc;

    snprintf(port, sizeof(port), "%d", srv.opt.port);
    rc = getaddrinfo(srv.opt.bind, port, &hints, &ai);
    if (rc) {
        fprintf(stderr, "ssnserver: cannot use address %s: %s\n",
                srv.opt.bind, gai_strerror(rc));
        return NULL;
    }
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
    struct sockaddr_storage bound;
    socklen_t blen = sizeof(bound);
    int rc = threads_init();

    if (rc) {
        fprintf(stderr, "ssnserver: cannot set up threads: %s\n",
                strerror(-rc));
        return -1;
    }
    struct evconnlistener *l = bind_listener(base);
    if (!l)
        return -1;
    evconnlistener_set_error_cb(l, accept_error_cb);
    pthread_mutex_lock(&listener_lock);
    listener = l;
    pthread_mutex_unlock(&listener_lock);

    getsockname(evconnlistener_get_fd(l), (struct sockaddr *)&bound, &blen);
    print_address((struct sockaddr *)&bound);
    return 0;
}

void listener_stop(void)
{
    pthread_mutex_lock(&listener_lock);
    if (listener)
        evconnlistener_free(listener);
    listener = NULL;
    pthread_mutex_unlock(&listener_lock);
}
