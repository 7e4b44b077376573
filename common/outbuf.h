/* outbuf.h -- a growable reply buffer written to a file descriptor in one
 * go. Sessions collect the replies to a whole pipelined batch here and send
 * them with one write; the buffer is kept and reused, so steady traffic does
 * not allocate. Writes never raise SIGPIPE on sockets (MSG_NOSIGNAL).
 */
#ifndef SSN_OUTBUF_H
#define SSN_OUTBUF_H

#include <stddef.h>

struct outbuf {
    char *buf;
    size_t len, cap;
    int fd;
    int is_socket;              /* send(MSG_NOSIGNAL) rather than write */
};

/* Returns 0 or -ENOMEM. */
int ob_init(struct outbuf *ob, int fd, size_t initial_cap);
void ob_destroy(struct outbuf *ob);

/* Appends; returns 0 or -ENOMEM (the buffer is unchanged then). */
int ob_append(struct outbuf *ob, const void *data, size_t len);
int ob_puts(struct outbuf *ob, const char *s);
int ob_printf(struct outbuf *ob, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Writes everything buffered, retrying partial writes and EINTR; the
 * buffer is empty afterwards either way. Returns 0 or -errno. */
int ob_flush(struct outbuf *ob);

/* Writes all of data to fd (send with MSG_NOSIGNAL when is_socket).
 * Returns 0 or -errno. */
int write_all(int fd, int is_socket, const void *data, size_t len);

/* 1 when fd is a socket. */
int fd_is_socket(int fd);

#endif
