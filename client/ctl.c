/* ctl.c -- one-request-at-a-time queries with time limits (ctl.h). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "ctl.h"
#include "net.h"
#include "timeutil.h"

int ctl_open(struct ctl *c, const char *host, const char *port,
             int timeout_ms)
{
    memset(c, 0, sizeof(*c));
    c->timeout_ms = timeout_ms;
    c->fd = net_connect(host, port, 0, 0, timeout_ms, c->err, sizeof(c->err));
    if (c->fd < 0)
        return c->fd;
    lr_init(&c->lr, CTL_REPLY_MAX);
    return 0;
}

/* Reads until one line is complete or the deadline passes. */
static int read_line(struct ctl *c, uint64_t deadline, char **line,
                     size_t *len)
{
    for (;;) {
        int st = lr_next(&c->lr, line, len);
        if (st == LR_LINE)
            return 0;
        if (st == LR_TOOLONG) {
            snprintf(c->err, sizeof(c->err), "reply line too long");
            return -EPROTO;
        }
        uint64_t now = time_now_ns();
        if (now >= deadline) {
            snprintf(c->err, sizeof(c->err), "no reply within %.1f s",
                     c->timeout_ms / 1000.0);
            return -ETIMEDOUT;
        }
        int ms = (int)((deadline - now) / TIME_NS_PER_MS) + 1;
        int ev = net_wait(c->fd, POLLIN, ms);
        if (ev == 0)
            continue;
        ssize_t n = ev < 0 ? ev : lr_read(&c->lr, c->fd);
        if (n == -EAGAIN)
            continue;
        if (n == 0) {
            snprintf(c->err, sizeof(c->err), "server closed the connection");
            return -EPIPE;
        }
        if (n < 0) {
            snprintf(c->err, sizeof(c->err), "%s", strerror((int)-n));
            return (int)n;
        }
    }
}

int ctl_query(struct ctl *c, const char *req, char *out, size_t outlen)
{
    char buf[256];
    int n = snprintf(buf, sizeof(buf), "%s\n", req);
    if (n < 0 || (size_t)n >= sizeof(buf))
        return -EINVAL;
    uint64_t deadline = time_now_ns() + (uint64_t)c->timeout_ms *
                        TIME_NS_PER_MS;
    int rc = net_send_all(c->fd, buf, (size_t)n, deadline, NULL, NULL);
    if (rc) {
        snprintf(c->err, sizeof(c->err), "sending %s: %s", req,
                 rc == -EPIPE ? "server closed the connection"
                              : strerror(-rc));
        return rc;
    }
    char *line;
    size_t len;
    rc = read_line(c, deadline, &line, &len);
    if (rc)
        return rc;
    snprintf(out, outlen, "%s", line);
    for (char *q = out; *q; q++)        /* replies end up on terminals */
        if ((unsigned char)*q < ' ' || (unsigned char)*q >= 0x7f)
            *q = '?';
    return 0;
}

void ctl_close(struct ctl *c)
{
    if (c->fd < 0)
        return;
    char bye[16];
    /* The Bye and the close both mean the server let go of this session;
     * after that a serial server can accept the next client. */
    if (ctl_query(c, "DONE", bye, sizeof(bye)) == 0) {
        uint64_t deadline = time_now_ns() + (uint64_t)c->timeout_ms *
                            TIME_NS_PER_MS;
        char *line;
        size_t len;
        while (read_line(c, deadline, &line, &len) == 0)
            ;                       /* until EOF, an error or the deadline */
    }
    close(c->fd);
    c->fd = -1;
}

void ctl_abandon(struct ctl *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}
