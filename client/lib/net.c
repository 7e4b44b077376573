/* net.c -- connect with a time limit, bounded sends (net.h). */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "net.h"
#include "timeutil.h"

int net_wait(int fd, short events, int timeout_ms)
{
    struct pollfd p = { .fd = fd, .events = events };
    for (;;) {
        int n = poll(&p, 1, timeout_ms);
        if (n > 0)
            return p.revents ? p.revents : events;
        if (n == 0)
            return 0;
        if (errno != EINTR)
            return -errno;
    }
}

/* One address: non-blocking connect, then wait for the handshake. */
static int try_connect(const struct addrinfo *ai, int rcvbuf, int mss,
                       int timeout_ms)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
                    SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0)
        return -errno;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (rcvbuf > 0 &&
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) < 0)
        goto err;
    if (mss > 0 &&
        setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof(mss)) < 0)
        goto err;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
        return fd;
    if (errno != EINPROGRESS)
        goto err;

    int ev = net_wait(fd, POLLOUT, timeout_ms);
    if (ev == 0) {
        errno = ETIMEDOUT;
        goto err;
    }
    if (ev < 0) {
        errno = -ev;
        goto err;
    }
    int soerr = 0;
    socklen_t len = sizeof(soerr);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
        goto err;
    if (soerr) {
        errno = soerr;
        goto err;
    }
    return fd;
err:;
    int e = errno;
    close(fd);
    return -e;
}

int net_connect(const char *host, const char *port, int rcvbuf, int mss,
                int timeout_ms, char *err, size_t errlen)
{
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC,
        .ai_socktype = SOCK_STREAM,
        .ai_flags = AI_NUMERICSERV,
    };
    struct addrinfo *res;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve %s port %s: %s", host, port,
                 gai_strerror(rc));
        return -EHOSTUNREACH;
    }
    int fd = -ECONNREFUSED;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = try_connect(ai, rcvbuf, mss, timeout_ms);
        if (fd >= 0)
            break;
    }
    freeaddrinfo(res);
    if (fd < 0)
        snprintf(err, errlen, "cannot connect to %s:%s: %s", host, port,
                 strerror(-fd));
    return fd;
}

int net_send_all(int fd, const void *buf, size_t len, uint64_t deadline_ns,
                 atomic_int *stop, size_t *sent)
{
    const char *p = buf;
    size_t done = 0;
    int rc = 0;

    while (done < len) {
        if (stop && atomic_load(stop)) {
            rc = -ECANCELED;
            break;
        }
        ssize_t n = send(fd, p + done, len - done, MSG_NOSIGNAL);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            rc = -errno;
            break;
        }
        if (deadline_ns && time_now_ns() >= deadline_ns) {
            rc = -ETIMEDOUT;
            break;
        }
        int ev = net_wait(fd, POLLOUT, NET_POLL_MS);
        if (ev < 0) {
            rc = ev;
            break;
        }
    }
    if (sent)
        *sent = done;
    return rc;
}
