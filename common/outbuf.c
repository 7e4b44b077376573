/* outbuf.c -- reply buffering and complete writes (outbuf.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "outbuf.h"

int ob_init(struct outbuf *ob, int fd, size_t initial_cap)
{
    ob->buf = malloc(initial_cap);
    if (!ob->buf)
        return -ENOMEM;
    ob->len = 0;
    ob->cap = initial_cap;
    ob->fd = fd;
    ob->is_socket = fd_is_socket(fd);
    return 0;
}

void ob_destroy(struct outbuf *ob)
{
    free(ob->buf);
    ob->buf = NULL;
    ob->len = ob->cap = 0;
}

static int ob_reserve(struct outbuf *ob, size_t more)
{
    if (ob->len + more <= ob->cap)
        return 0;
    size_t cap = ob->cap ? ob->cap : 256;
    while (cap < ob->len + more)
        cap *= 2;
    char *p = realloc(ob->buf, cap);
    if (!p)
        return -ENOMEM;
    ob->buf = p;
    ob->cap = cap;
    return 0;
}

int ob_append(struct outbuf *ob, const void *data, size_t len)
{
    if (ob_reserve(ob, len))
        return -ENOMEM;
    memcpy(ob->buf + ob->len, data, len);
    ob->len += len;
    return 0;
}

int ob_puts(struct outbuf *ob, const char *s)
{
    return ob_append(ob, s, strlen(s));
}

int ob_printf(struct outbuf *ob, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(ob->buf + ob->len, ob->cap - ob->len, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -EINVAL;
    if ((size_t)n >= ob->cap - ob->len) {   /* did not fit: grow, redo */
        if (ob_reserve(ob, (size_t)n + 1))
            return -ENOMEM;
        va_start(ap, fmt);
        vsnprintf(ob->buf + ob->len, ob->cap - ob->len, fmt, ap);
        va_end(ap);
    }
    ob->len += (size_t)n;
    return 0;
}

int ob_flush(struct outbuf *ob)
{
    int rc = write_all(ob->fd, ob->is_socket, ob->buf, ob->len);
    ob->len = 0;
    return rc;
}

int write_all(int fd, int is_socket, const void *data, size_t len)
{
    const char *p = data;

    while (len > 0) {
        ssize_t n = is_socket ? send(fd, p, len, MSG_NOSIGNAL)
                              : write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int fd_is_socket(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}
