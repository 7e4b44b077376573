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
    if (ob->limit && ob->len + more > ob->limit)
        return -ENOBUFS;        /* even within the capacity there is */
    if (ob->len + more <= ob->cap)
        return 0;
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
    char *aside = NULL;
    int n, rc = 0;

    va_copy(again, ap);
    n = vsnprintf(ob->buf + ob->len, ob->cap - ob->len, fmt, ap);
    if (n < 0) {
        rc = -EINVAL;
    } else if ((size_t)n >= ob->cap - ob->len) {        /* grow, redo */
        /* Room for the text and the NUL vsnprintf writes after it. The
         * NUL is not contents, so when only it is over the limit, format
         * aside: printf takes exactly the bytes ob_append would. */
        rc = ob_reserve(ob, (size_t)n + 1);
        if (rc == -ENOBUFS && ob_reserve(ob, (size_t)n) == 0)
            rc = (aside = malloc((size_t)n + 1)) ? 0 : -ENOMEM;
        if (rc == 0)
            vsnprintf(aside ? aside : ob->buf + ob->len, (size_t)n + 1, fmt,
                      again);
        if (aside) {
            memcpy(ob->buf + ob->len, aside, (size_t)n);
            free(aside);
        }
    }
    va_end(again);
    if (rc == 0)
        ob->len += (size_t)n;
    return rc;
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

void ob_shrink(struct outbuf *ob, size_t cap)
{
    if (cap < ob->len)
        cap = ob->len;
    if (cap == 0 || cap >= ob->cap)
        return;
    char *p = realloc(ob->buf, cap);
    if (p) {
        ob->buf = p;
        ob->cap = cap;
    }
}
