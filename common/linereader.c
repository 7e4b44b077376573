/* linereader.c -- splitting a byte stream into lines (linereader.h). Bytes
 * arrive through lr_space/lr_commit; lr_next hands out every complete line
 * without copying it. */
#include <assert.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "linereader.h"

void lr_init(struct linereader *lr, size_t max_line)
{
    lr->max_line = max_line < LR_MAX_LINE ? max_line : LR_MAX_LINE;
    lr->start = lr->end = 0;
    lr->discarding = 0;
    lr->overflowed = 0;
    lr->buf = NULL;
    lr->dirty = 0;
}

void lr_attach(struct linereader *lr, char *buf)
{
    assert(!lr->buf && lr->start == lr->end);
    lr->buf = buf;
    lr->start = lr->end = 0;
    lr->dirty = 0;
}

char *lr_detach(struct linereader *lr, size_t *dirty)
{
    char *buf = lr->buf;

    assert(lr->start == lr->end);       /* nothing buffered is lost */
    *dirty = buf ? lr->dirty : 0;
    lr->buf = NULL;
    lr->start = lr->end = 0;
    lr->dirty = 0;
    return buf;
}

void lr_drop(struct linereader *lr)
{
    lr->start = lr->end = 0;
}

size_t lr_pending(const struct linereader *lr)
{
    return lr->end - lr->start;
}

int lr_between_lines(const struct linereader *lr)
{
    return lr->end == lr->start && !lr->discarding && !lr->overflowed;
}

char *lr_space(struct linereader *lr, size_t *room)
{
    assert(lr->buf);
    if (lr->start > 0) {                /* slide the unread bytes down */
        memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
        lr->end -= lr->start;
        lr->start = 0;
    }
    if (lr->end == LR_BUF_SIZE && !memchr(lr->buf, '\n', lr->end)) {
        /* A full buffer with no newline: more than any line within the
         * limit, put in without lr_next in between. It is an over-long
         * line; say so, unless
         * we are already discarding it (then LR_TOOLONG was said or is
         * pending, and once per line is the promise). */
        if (!lr->discarding)
            lr->overflowed = 1;
        lr->discarding = 1;
        lr->end = 0;
    }
    *room = LR_BUF_SIZE - lr->end;
    return lr->buf + lr->end;
}

void lr_commit(struct linereader *lr, size_t n)
{
    lr->end += n;
    if (lr->end > lr->dirty)
        lr->dirty = lr->end;
}

size_t lr_feed(struct linereader *lr, const void *data, size_t len)
{
    size_t room;
    char *p = lr_space(lr, &room);

    if (len > room)
        len = room;
    memcpy(p, data, len);
    lr_commit(lr, len);
    return len;
}

ssize_t lr_read(struct linereader *lr, int fd)
{
    size_t room;
    char *p = lr_space(lr, &room);

    if (room == 0)
        return -ENOBUFS;
    for (;;) {
        ssize_t n = read(fd, p, room);
        if (n >= 0) {
            lr_commit(lr, (size_t)n);
            return n;
        }
        if (errno != EINTR)
            return -errno;
    }
}

int lr_next(struct linereader *lr, char **line, size_t *len)
{
    if (lr->overflowed) {
        lr->overflowed = 0;
        return LR_TOOLONG;
    }
    if (!lr->buf)
        return LR_AGAIN;                /* nothing can be buffered */
    for (;;) {
        char *p = lr->buf + lr->start;
        size_t avail = lr->end - lr->start;
        char *nl = memchr(p, '\n', avail);

        if (lr->discarding) {
            if (!nl) {                  /* drop what we have, keep going */
                lr->start = lr->end = 0;
                return LR_AGAIN;
            }
            lr->start += (size_t)(nl - p) + 1;
            lr->discarding = 0;
            continue;
        }
        if (!nl) {
            /* Room for max_line bytes, a '\r' and the '\n' still to come;
             * anything longer is over the limit already. */
            if (avail > lr->max_line + 1) {
                lr->discarding = 1;
                lr->start = lr->end = 0;
                return LR_TOOLONG;
            }
            return LR_AGAIN;
        }
        size_t n = (size_t)(nl - p);
        lr->start += n + 1;
        if (n > 0 && p[n - 1] == '\r')
            n--;
        if (n > lr->max_line)
            return LR_TOOLONG;
        p[n] = '\0';
        *line = p;
        *len = n;
        return LR_LINE;
    }
}
