/* linereader.h -- a line splitter over a byte stream that does no I/O of its
 * own, for sockets, pipes and test strings alike (no stdio on sockets).
 *
 * The owner puts bytes in (lr_space + lr_commit to receive straight into the
 * buffer, lr_feed to copy, lr_read to read(2) once from an fd) and takes
 * lines out with lr_next, which hands out every complete line already
 * buffered without a system call, so a caller can answer a whole pipelined
 * batch before it receives again. Lines longer than the limit are reported
 * once and the rest of them discarded, and the stream stays usable.
 */
#ifndef SSN_LINEREADER_H
#define SSN_LINEREADER_H

#include <stddef.h>
#include <sys/types.h>

#define LR_BUF_SIZE 16384       /* bytes buffered at most */
#define LR_MAX_LINE (LR_BUF_SIZE - 2)   /* the longest limit: a line of it
                                           and its "\r\n" fill the buffer */

enum lr_status {
    LR_LINE = 1,                /* line and len hold one line */
    LR_AGAIN = 0,               /* no complete line buffered: put more in */
    LR_TOOLONG = -1,            /* a line over the limit was dropped */
};

struct linereader {
    size_t max_line;            /* longest line accepted, without \r\n */
    size_t start, end;          /* unread bytes are buf[start..end) */
    int discarding;             /* inside an over-long line */
    int overflowed;             /* a full buffer held no newline: report
                                   LR_TOOLONG before anything else */
    char buf[LR_BUF_SIZE];
};

/* max_line is capped at LR_MAX_LINE, so that every line within the limit
 * fits in the buffer with its "\r\n". */
void lr_init(struct linereader *lr, size_t max_line);

/* Where the next bytes go: returns a pointer to *room free bytes after the
 * buffered ones. Lines handed out by lr_next are invalid after this call
 * (the buffer is compacted). *room is 0 only while complete lines wait to
 * be taken: take them all (lr_next until LR_AGAIN) first. A full buffer
 * with no newline is dropped as an over-long line to make room. */
char *lr_space(struct linereader *lr, size_t *room);

/* n bytes were written at lr_space's pointer (n <= its *room). */
void lr_commit(struct linereader *lr, size_t n);

/* Copies as much of data as fits; returns how many bytes were taken. */
size_t lr_feed(struct linereader *lr, const void *data, size_t len);

/* Reads once from fd into the buffer. Returns bytes read (>0), 0 at end of
 * file, or -errno (-ENOBUFS when lines wait to be taken). Retries EINTR. */
ssize_t lr_read(struct linereader *lr, int fd);

/* Next complete line: LR_LINE with *line pointing into the buffer (valid
 * until the next lr_space, lr_feed or lr_read), its '\n' and one '\r'
 * before it removed and a NUL written in their place; LR_AGAIN; or
 * LR_TOOLONG once per over-long line. */
int lr_next(struct linereader *lr, char **line, size_t *len);

/* Bytes buffered but not yet handed out (a partial last line). */
size_t lr_pending(const struct linereader *lr);

#endif
