/* listener.c -- accepting connections and starting session threads
 * (listener.h). The listener is libevent's, created LEV_OPT_THREADSAFE so a
 * session thread may re-enable it in serial mode. */
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
#include "listener.h"
#include "lockmode.h"
#include "log.h"
#include "outbuf.h"
#include "server.h"
#include "session.h"

/* Each session thread's stack: small, so thousands of connections fit. The
 * session keeps its buffers on the heap. Sanitizers need more room. */
#ifdef SSN_SANITIZED
#define SESSION_STACK   (1024 * 1024)
#else
#define SESSION_STACK   (128 * 1024)
#endif
#define LISTEN_BACKLOG  1024

/* listener_lock protects the listener pointer against a serial-mode
 * session re-enabling it while the main thread frees it at shutdown. */
static pthread_mutex_t listener_lock = PTHREAD_MUTEX_INITIALIZER;
static struct evconnlistener *listener;
static pthread_attr_t session_attr;

static void refuse(int fd, const char *line)
{
    write_all(fd, 1, line, strlen(line));
    close(fd);
}

static void *session_thread(void *arg)
{
    struct session *s = arg;
    int fd = s->rfd;

    session_run(s);
    conns_unregister(s);
    session_free(s);
    close(fd);
    log_msg(LOG_DEBUG, "connection closed (fd %d)", fd);
    if (lock_policy->one_at_a_time) {
        pthread_mutex_lock(&listener_lock);
        if (listener)
            evconnlistener_enable(listener);
        pthread_mutex_unlock(&listener_lock);
    }
    return NULL;
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd,
                      struct sockaddr *sa, int socklen, void *arg)
{
    pthread_t tid;
    int one = 1, rc;

    (void)sa; (void)socklen; (void)arg;
    if (atomic_load(&srv.connections_current) >= srv.opt.max_clients) {
        atomic_fetch_add(&srv.connections_rejected, 1);
        log_msg(LOG_WARN, "refused a connection: %ld clients connected",
                srv.opt.max_clients);
        refuse(fd, "Error: too many connections\n");
        return;
    }
    /* Replies are batched by the session, so Nagle would only add delay. */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

    struct session *s = session_new(fd, fd, 0);
    if (!s) {
        log_msg(LOG_ERROR, "refused a connection: out of memory");
        refuse(fd, "Error: out of memory\n");
        return;
    }
    conns_register(s);
    if (lock_policy->one_at_a_time)
        evconnlistener_disable(l);      /* the rest wait in the backlog */
    rc = pthread_create(&tid, &session_attr, session_thread, s);
    if (rc) {
        atomic_fetch_add(&srv.thread_failures, 1);
        log_msg(LOG_ERROR, "cannot start a session thread: %s", strerror(rc));
        conns_unregister(s);
        session_free(s);
        refuse(fd, "Error: server busy: cannot start a thread\n");
        if (lock_policy->one_at_a_time)
            evconnlistener_enable(l);
        return;
    }
    log_msg(LOG_DEBUG, "connection accepted (fd %d)", fd);
}

static void accept_error_cb(struct evconnlistener *l, void *arg)
{
    int err = EVUTIL_SOCKET_ERROR();
    (void)l; (void)arg;
    /* EMFILE and friends: log and carry on; the next accept may succeed. */
    log_msg(LOG_WARN, "accept failed: %s", evutil_socket_error_to_string(err));
}

static void print_address(const struct sockaddr *sa)
{
    char host[INET6_ADDRSTRLEN];
    int port;

    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)sa;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
        port = ntohs(a->sin6_port);
        printf("listening on [%s]:%d\n", host, port);
    } else {
        const struct sockaddr_in *a = (const void *)sa;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
        port = ntohs(a->sin_port);
        printf("listening on %s:%d\n", host, port);
    }
    fflush(stdout);
}

int listener_start(struct event_base *base)
{
    struct addrinfo hints = { .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
                              .ai_socktype = SOCK_STREAM };
    struct addrinfo *ai;
    struct sockaddr_storage bound;
    socklen_t blen = sizeof(bound);
    char port[8];
    int rc;

    snprintf(port, sizeof(port), "%d", srv.opt.port);
    rc = getaddrinfo(srv.opt.bind, port, &hints, &ai);
    if (rc) {
        fprintf(stderr, "ssnserver: cannot use address %s: %s\n",
                srv.opt.bind, gai_strerror(rc));
        return -1;
    }
    listener = evconnlistener_new_bind(base, accept_cb, NULL,
        LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC |
        LEV_OPT_LEAVE_SOCKETS_BLOCKING | LEV_OPT_THREADSAFE,
        LISTEN_BACKLOG, ai->ai_addr, (int)ai->ai_addrlen);
    freeaddrinfo(ai);
    if (!listener) {
        fprintf(stderr, "ssnserver: cannot listen on %s port %d: %s\n",
                srv.opt.bind, srv.opt.port, strerror(errno));
        return -1;
    }
    evconnlistener_set_error_cb(listener, accept_error_cb);

    pthread_attr_init(&session_attr);
    pthread_attr_setdetachstate(&session_attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&session_attr, SESSION_STACK);

    getsockname(evconnlistener_get_fd(listener), (struct sockaddr *)&bound,
                &blen);
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
