/* outbuf.c -- reply buffering (outbuf.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "outbuf.h"

int ob_init(struct outbuf *ob, size_t initial_cap)
{
    ob->buf = malloc(initial_cap);
    if (!ob->buf)
        return -ENOMEM;
    ob->len = 0;
    ob->cap = initial_cap;
    ob->limit = 0;
    return 0;
}

void ob_destroy(struct outbuf *ob)
{
    free(ob->buf);
    ob->buf = NULL;
    ob->len = ob->cap = 0;
}

int ob_reserve(struct outbuf *ob, size_t more)
{
    if (ob->len + more <= ob->cap)
        return 0;
    if (ob->limit && ob->len + more > ob->limit)
        return -ENOBUFS;
    size_t cap = ob->cap ? ob->cap : 256;
    while (cap < ob->len + more)
        cap *= 2;
    if (ob->limit && cap > ob->limit)
        cap = ob->limit;
    char *p = realloc(ob->buf, cap);
    if (!p)
        return -ENOMEM;
    ob->buf = p;
    ob->cap = cap;
    return 0;
}

int ob_append(struct outbuf *ob, const void *data, size_t len)
{
    int rc = ob_reserve(ob, len);
    if (rc)
        return rc;
    memcpy(ob->buf + ob->len, data, len);
    ob->len += len;
    return 0;
}

int ob_puts(struct outbuf *ob, const char *s)
{
    return ob_append(ob, s, strlen(s));
}

int ob_vprintf(struct outbuf *ob, const char *fmt, va_list ap)
{
    va_list again;
    int n, rc;

    va_copy(again, ap);
    n = vsnprintf(ob->buf + ob->len, ob->cap - ob->len, fmt, ap);
    if (n >= 0 && (size_t)n >= ob->cap - ob->len) {   /* grow, redo */
        if ((rc = ob_reserve(ob, (size_t)n + 1))) {
            va_end(again);
            return rc;
        }
        vsnprintf(ob->buf + ob->len, ob->cap - ob->len, fmt, again);
    }
    va_end(again);
    if (n < 0)
        return -EINVAL;
    ob->len += (size_t)n;
    return 0;
}

int ob_printf(struct outbuf *ob, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    int rc = ob_vprintf(ob, fmt, ap);
    va_end(ap);
    return rc;
}

void ob_consume(struct outbuf *ob, size_t n)
{
    if (n >= ob->len) {
        ob->len = 0;
        return;
    }
    memmove(ob->buf, ob->buf + n, ob->len - n);
    ob->len -= n;
}

void ob_truncate(struct outbuf *ob, size_t len)
{
    if (len < ob->len)
        ob->len = len;
}
