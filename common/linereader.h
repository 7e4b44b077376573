/* linereader.h -- a buffered line reader over a file descriptor, for
 * sockets and pipes alike (no stdio on sockets).
 *
 * lr_next hands out every complete line already in the buffer without a
 * system call, so a caller can answer a whole pipelined batch before it
 * reads again. Lines longer than the limit are reported once and the rest
 * of them discarded, and the stream stays usable.
 */
#ifndef SSN_LINEREADER_H
#define SSN_LINEREADER_H

#include <stddef.h>
#include <sys/types.h>

#define LR_BUF_SIZE 16384       /* bytes read at most per read(2) */

enum lr_status {
    LR_LINE = 1,                /* line and len hold one line */
    LR_AGAIN = 0,               /* no complete line buffered: call lr_fill */
    LR_TOOLONG = -1,            /* a line over the limit was dropped */
};

struct linereader {
    int fd;
    size_t max_line;            /* longest line accepted, without \r\n */
    size_t start, end;          /* unread bytes are buf[start..end) */
    int discarding;             /* inside an over-long line */
    char buf[LR_BUF_SIZE];
};

void lr_init(struct linereader *lr, int fd, size_t max_line);

/* Reads once. Returns bytes read (>0), 0 at end of file, or -errno.
 * Retries EINTR. */
ssize_t lr_fill(struct linereader *lr);

/* Next complete line: LR_LINE with *line pointing into the buffer (valid
 * until the next lr_fill), its '\n' and one '\r' before it removed and a NUL
 * written in their place; LR_AGAIN; or LR_TOOLONG once per over-long line. */
int lr_next(struct linereader *lr, char **line, size_t *len);

/* Bytes buffered but not yet handed out (a partial last line). */
size_t lr_pending(const struct linereader *lr);

#endif
