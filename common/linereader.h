/* linereader.h -- a line splitter over a byte stream that does no I/O of its
 * own, for sockets, pipes and test strings alike (no stdio on sockets).
 *
 * The owner puts bytes in (lr_space + lr_commit to receive straight into the
 * buffer, lr_feed to copy, lr_read to read(2) once from an fd) and takes
 * lines out with lr_next, which hands out every complete line already
 * buffered without a system call, so a caller can answer a whole pipelined
 * batch before it receives again. Lines longer than the limit are reported
 * once and the rest of them discarded, and the stream stays usable.
 *
 * The buffer is the owner's, lent with lr_attach and taken back with
 * lr_detach whenever nothing is buffered, so that an idle connection need
 * not hold one (a server borrows it from a pool while a request is in
 * progress, memcached's way). Everything else the reader knows (the limit,
 * an over-long line being discarded) stays in struct linereader, so a
 * stream reads the same with or without a detach between its bytes.
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
    char *buf;                  /* LR_BUF_SIZE bytes, lent by the owner;
                                   NULL: none attached */
    size_t dirty;               /* bytes of buf written since it was
                                   attached: what a wipe must cover */
};

/* max_line is capped at LR_MAX_LINE, so that every line within the limit
 * fits in the buffer with its "\r\n". No buffer is attached yet. */
void lr_init(struct linereader *lr, size_t max_line);

/* Lends the reader buf, LR_BUF_SIZE bytes, which it uses until lr_detach.
 * Only while none is attached. */
void lr_attach(struct linereader *lr, char *buf);

/* Takes the buffer back: returns it (NULL when none was attached) and, in
 * *dirty, how many bytes at its start were written since it was attached
 * (the owner wipes them: they held the client's input). Only while nothing
 * is buffered (lr_pending is 0); an over-long line being discarded stays
 * known. The functions below but lr_pending need a buffer attached. */
char *lr_detach(struct linereader *lr, size_t *dirty);

/* Forgets every byte buffered (the stream ends: its owner is about to
 * detach and wipe the buffer). */
void lr_drop(struct linereader *lr);

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

/* 1 when the reader is between lines: nothing buffered and no over-long
 * line being discarded, so a fresh reader would read on the same. */
int lr_between_lines(const struct linereader *lr);

#endif
