/* linereader.c -- buffered line reading over a file descriptor
 * (linereader.h). One read(2) fills as much as fits; lr_next then hands out
 * every complete line without another system call. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "linereader.h"

void lr_init(struct linereader *lr, int fd, size_t max_line)
{
    lr->fd = fd;
    lr->max_line = max_line;
    lr->start = lr->end = 0;
    lr->discarding = 0;
}

size_t lr_pending(const struct linereader *lr)
{
    return lr->end - lr->start;
}

ssize_t lr_fill(struct linereader *lr)
{
    if (lr->start > 0) {                /* slide the partial line down */
        memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
        lr->end -= lr->start;
        lr->start = 0;
    }
    if (lr->end == sizeof(lr->buf)) {
        /* A full buffer with no newline: only possible when max_line is
         * near the buffer size. Treat it as an over-long line. */
        lr->discarding = 1;
        lr->end = 0;
    }
    for (;;) {
        ssize_t n = read(lr->fd, lr->buf + lr->end, sizeof(lr->buf) - lr->end);
        if (n >= 0) {
            lr->end += (size_t)n;
            return n;
        }
        if (errno != EINTR)
            return -errno;
    }
}

int lr_next(struct linereader *lr, char **line, size_t *len)
{
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
