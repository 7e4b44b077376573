/* threads.c -- the thread-per-connection driver (threads.h). A session
 * thread blocks in read(2), hands what arrived to its session, and writes
 * the batch's replies with one write. The thread never holds the store
 * lock itself: the session takes it through the lock policy. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fdio.h"
#include "listener.h"
#include "lockmode.h"
#include "log.h"
#include "server.h"
#include "session.h"
#include "threads.h"

/* Each session thread's stack: small, so thousands of connections fit. The
 * session keeps its buffers on the heap. Sanitizers need more room. */
#ifdef SSN_SANITIZED
#define SESSION_STACK   (1024 * 1024)
#else
#define SESSION_STACK   (128 * 1024)
#endif

static pthread_attr_t session_attr;

int threads_init(void)
{
    int rc = pthread_attr_init(&session_attr);
    if (!rc)
        rc = pthread_attr_setdetachstate(&session_attr,
                                         PTHREAD_CREATE_DETACHED);
    if (!rc)
        rc = pthread_attr_setstacksize(&session_attr, SESSION_STACK);
    return -rc;
}

int threads_send_fd(void *fd, const void *data, size_t len)
{
    return fd_write_all((int)(intptr_t)fd, data, len);
}

int threads_serve(struct session *s, int rfd)
{
    int rc = session_begin(s);

    if (rc)
        return rc;
    for (;;) {
        size_t room;
        char *p = session_recv_space(s, &room);
        ssize_t n = read(rfd, p, room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;                      /* closed, reset or shut down */
        int done = session_received(s, (size_t)n);
        if (session_flush(s) || done)
            break;
    }
    session_flush(s);
    session_end(s);
    return 0;
}

static void *session_thread(void *arg)
{
    struct conn *c = arg;
    struct store *st = c->session->store;
    int rc = threads_serve(c->session, c->fd);

    if (rc)
        log_msg(LOG_LEVEL_ERROR, "session could not begin: %s",
                strerror(-rc));
    conns_unregister(c);
    session_free(c->session);
    close(c->fd);
    log_msg(LOG_LEVEL_DEBUG, "connection closed (fd %d)", c->fd);
    free(c);
    if (st->policy->dismiss(st) == LOCK_ADMIT_MORE)
        listener_resume();
    return NULL;
}

int threads_start(int fd)
{
    const struct session_io io = {
        .send = threads_send_fd, .arg = (void *)(intptr_t)fd,
    };
    struct conn *c = calloc(1, sizeof(*c));
    pthread_t tid;
    int rc;

    if (!c)
        return -ENOMEM;
    c->fd = fd;
    c->session = session_new(&srv.store, &io, 0);
    if (!c->session) {
        free(c);
        return -ENOMEM;
    }
    conns_register(c);
    rc = pthread_create(&tid, &session_attr, session_thread, c);
    if (rc) {
        conns_unregister(c);
        session_free(c->session);
        free(c);
        return -rc;
    }
    return 0;
}
