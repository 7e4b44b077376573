/* outbuf.c -- reply buffering (outbuf.h). The buffer moves by copy and
 * wipe, never by realloc, so no reply's bytes are left in freed memory. */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "outbuf.h"

int ob_init(struct outbuf *ob, size_t initial_cap)
{
    ob->buf = NULL;
    ob->len = ob->cap = ob->dirty = 0;
    ob->limit = 0;
    if (initial_cap == 0)
        return 0;
    ob->buf = malloc(initial_cap);
    if (!ob->buf)
        return -ENOMEM;
    ob->cap = initial_cap;
    return 0;
}

void ob_destroy(struct outbuf *ob)
{
    if (ob->buf)
        explicit_bzero(ob->buf, ob->dirty);
    free(ob->buf);
    ob->buf = NULL;
    ob->len = ob->cap = ob->dirty = 0;
}

void ob_attach(struct outbuf *ob, char *buf, size_t cap)
{
    assert(!ob->buf && ob->len == 0);
    ob->buf = buf;
    ob->cap = cap;
    ob->dirty = 0;
}

char *ob_detach(struct outbuf *ob, size_t *cap, size_t *dirty)
{
    char *buf = ob->buf;

    assert(ob->len == 0);               /* nothing unsent is lost */
    *cap = ob->cap;
    *dirty = ob->dirty;
    ob->buf = NULL;
    ob->cap = ob->dirty = 0;
    return buf;
}

/* Bytes up to end were written: a wipe covers them. */
static void mark_dirty(struct outbuf *ob, size_t end)
{
    if (end > ob->dirty)
        ob->dirty = end;
}

/* Moves the contents to a new buffer of cap bytes and wipes the old one.
 * Returns 0 or -ENOMEM (the buffer unchanged). */
char *ob_move_wiped(char *old, size_t len, size_t dirty, size_t cap)
{
    char *p = malloc(cap);      /* not realloc: the old copy is wiped */

    if (!p)
        return NULL;
    if (old) {
        memcpy(p, old, len);
        explicit_bzero(old, dirty);
        free(old);
    }
    return p;
}

static int move_to(struct outbuf *ob, size_t cap)
{
    char *p = ob_move_wiped(ob->buf, ob->len, ob->dirty, cap);

    if (!p)
        return -ENOMEM;
    ob->buf = p;
    ob->cap = cap;
    ob->dirty = ob->len;
    return 0;
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
    return move_to(ob, cap);
}

int ob_append(struct outbuf *ob, const void *data, size_t len)
{
    int rc = ob_reserve(ob, len);
    if (rc)
        return rc;
    if (len == 0)
        return 0;                       /* ob->buf may still be NULL */
    memcpy(ob->buf + ob->len, data, len);
    ob->len += len;
    mark_dirty(ob, ob->len);
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
    size_t room = ob->cap - ob->len;
    n = vsnprintf(room ? ob->buf + ob->len : NULL, room, fmt, ap);
    if (n >= 0)                 /* what it wrote, a truncated part too */
        mark_dirty(ob, ob->len + ((size_t)n < room ? (size_t)n + 1 : room));
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
            explicit_bzero(aside, (size_t)n + 1);
            free(aside);
        }
        if (rc == 0)
            mark_dirty(ob, ob->len + (size_t)n + !aside);
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
    move_to(ob, cap);                   /* as it was if it fails */
}
