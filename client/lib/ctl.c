/* ctl.c -- one-request-at-a-time queries with time limits (ctl.h). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include "ctl.h"
#include "net.h"
#include "proto.h"
#include "timeutil.h"

void ctl_adopt(struct ctl *c, int fd, int timeout_ms)
{
    memset(c, 0, sizeof(*c));
    c->timeout_ms = timeout_ms;
    c->fd = fd;
    lr_init(&c->lr, CTL_REPLY_MAX);
    lr_attach(&c->lr, c->lr_mem);
}

int ctl_open(struct ctl *c, const char *host, const char *port,
             int timeout_ms)
{
    char err[sizeof(c->err)];
    int fd = net_connect(host, port, 0, 0, timeout_ms, err, sizeof(err));

    ctl_adopt(c, fd, timeout_ms);
    if (fd < 0) {
        memcpy(c->err, err, sizeof(c->err));
        return fd;
    }
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
        if (c->hint_at && now >= c->hint_at) {
            c->hint_at = 0;
            c->hint(c->hint_arg);
        }
        uint64_t until = c->hint_at && c->hint_at < deadline ? c->hint_at
                                                             : deadline;
        int ms = (int)((until - now) / TIME_NS_PER_MS) + 1;
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

static uint64_t request_deadline(const struct ctl *c)
{
    return time_now_ns() + (uint64_t)c->timeout_ms * TIME_NS_PER_MS;
}

/* Sends the n bytes of req (a whole request line; what names it in c->err)
 * by deadline. Returns 0 or -errno. */
static int send_request(struct ctl *c, const char *what, const char *req,
                        size_t n, uint64_t deadline)
{
    int rc = net_send_all(c->fd, req, n, deadline, NULL, NULL);
    if (rc)
        snprintf(c->err, sizeof(c->err), "sending %s: %s", what,
                 rc == -EPIPE ? "server closed the connection"
                              : strerror(-rc));
    return rc;
}

/* A control reply's line as it may reach a terminal: printable ASCII,
 * anything else '?' (STATS and the other control replies are ASCII). */
static void ascii_only(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < ' ' || (unsigned char)*s >= 0x7f)
            *s = '?';
}

/* Sends the n bytes of req (a whole request line; what names it in c->err)
 * and reads one reply line into out. */
static int exchange(struct ctl *c, const char *what, const char *req,
                    size_t n, char *out, size_t outlen)
{
    uint64_t deadline = request_deadline(c);
    int rc = send_request(c, what, req, n, deadline);
    if (rc)
        return rc;
    char *line;
    size_t len;
    rc = read_line(c, deadline, &line, &len);
    if (rc)
        return rc;
    snprintf(out, outlen, "%s", line);
    ascii_only(out);
    return 0;
}

int ctl_query(struct ctl *c, const char *req, char *out, size_t outlen)
{
    char buf[256];
    int n = snprintf(buf, sizeof(buf), "%s\n", req);
    if (n < 0 || (size_t)n >= sizeof(buf))
        return -EINVAL;
    return exchange(c, req, buf, (size_t)n, out, outlen);
}

/* A block's line: a lower-case name ([a-z0-9_]), a space, a value. */
static int named_value(const char *line)
{
    const char *p = line;

    while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')
        p++;
    return p > line && *p == ' ';
}

int ctl_query_block(struct ctl *c, const char *req,
                    void (*line_cb)(void *arg, const char *line), void *arg)
{
    char line[CTL_REPLY_MAX];
    int rc = ctl_query(c, req, line, sizeof(line));
    uint64_t deadline = time_now_ns() + (uint64_t)c->timeout_ms *
                        TIME_NS_PER_MS;

    if (rc == 0 && strcmp(line, "END") != 0 && !named_value(line)) {
        /* Not a block: an "Error: ..." reply, or another server (Redis's
         * "-ERR", memcached's "ERROR"), said now, not after the time
         * limit's wait for END. */
        snprintf(c->err, sizeof(c->err), "%s answered '%.150s'", req, line);
        return -EPROTO;
    }
    while (rc == 0 && strcmp(line, "END") != 0) {
        line_cb(arg, line);
        char *next;
        size_t len;
        if ((rc = read_line(c, deadline, &next, &len)) == 0) {
            snprintf(line, sizeof(line), "%s", next);
            ascii_only(line);           /* every line, not the first only */
        }
    }
    return rc;
}

int ctl_request(struct ctl *c, const char *req, size_t len, int cmd,
                struct framer *f, ctl_line_fn line_cb, void *arg)
{
    uint64_t deadline = request_deadline(c);
    int rc = send_request(c, "the request", req, len, deadline);

    c->hint_at = c->hint && c->hint_ms > 0
                 ? time_now_ns() + (uint64_t)c->hint_ms * TIME_NS_PER_MS : 0;
    frame_begin(f, cmd);
    while (rc == 0) {
        char *line;
        size_t n;
        rc = read_line(c, deadline, &line, &n);
        c->hint_at = 0;                 /* the reply began, or never will */
        if (rc != 0)
            break;
        if (line_cb)
            line_cb(arg, line, n);
        if (frame_line(f, line, n))
            break;
    }
    return rc;
}

int ctl_auth(struct ctl *c, const char *password)
{
    char req[PROTO_MAX_LINE + 2], reply[CTL_REPLY_MAX];
    int n = snprintf(req, sizeof(req), "AUTH %s\n", password);
    int rc;

    if (n < 0 || (size_t)n > PROTO_MAX_LINE + 1) {
        snprintf(c->err, sizeof(c->err), "the password is too long for "
                 "one request line");
        rc = -EINVAL;
    } else {
        rc = exchange(c, "AUTH", req, (size_t)n, reply, sizeof(reply));
    }
    OPENSSL_cleanse(req, sizeof(req));
    if (rc == 0 && strcmp(reply, PROTO_OK) != 0) {
        snprintf(c->err, sizeof(c->err), "the server refused AUTH: it "
                 "answered '%.150s'", reply);
        rc = -EACCES;
    }
    return rc;
}

void ctl_close(struct ctl *c)
{
    if (c->fd < 0)
        return;
    char bye[16];
    /* The Bye and the close both mean the server let go of this session;
     * after that a serial server can accept the next client. A server
     * answers DONE at once: the wait is CTL_CLOSE_MS at most, even when
     * the requests had no time limit (the replies were all read). */
    if (c->timeout_ms > CTL_CLOSE_MS)
        c->timeout_ms = CTL_CLOSE_MS;
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
