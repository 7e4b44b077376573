/* outbuf.h -- a growable reply buffer that does no I/O of its own. Sessions
 * collect the replies to a whole pipelined batch here and their driver sends
 * them with one write; the buffer is kept and reused, so steady traffic does
 * not allocate. ob_reserve is the one place a buffer grows, and it honours
 * the buffer's limit: that is where an output limit goes.
 *
 * Replies hold SSNs and passwords, so no byte written is ever handed back
 * to the allocator unwiped: growing and shrinking copy and wipe instead of
 * realloc, ob_destroy wipes, and `dirty` says how much of a buffer taken
 * back with ob_detach its owner must wipe. The memory may also be lent by
 * the owner (ob_attach, ob_detach: a server's pool of reply buffers).
 */
#ifndef SSN_OUTBUF_H
#define SSN_OUTBUF_H

#include <stdarg.h>
#include <stddef.h>

struct outbuf {
    char *buf;                  /* NULL until first needed or attached */
    size_t len, cap;            /* bytes held, bytes allocated */
    size_t limit;               /* most bytes held (and largest cap grown
                                   to); 0: no limit */
    size_t dirty;               /* bytes at the start of buf written since
                                   it was allocated or attached */
};

/* initial_cap 0: nothing is allocated until the first append (or
 * ob_attach). Returns 0 or -ENOMEM. */
int ob_init(struct outbuf *ob, size_t initial_cap);

/* Wipes what was written and frees the buffer; the limit stays. */
void ob_destroy(struct outbuf *ob);

/* Lends ob the buffer buf of cap bytes. Only while ob has none. */
void ob_attach(struct outbuf *ob, char *buf, size_t cap);

/* Takes the buffer back while nothing is held (len 0): returns it (NULL
 * if there was none), its capacity in *cap and in *dirty how many bytes at
 * its start the owner must wipe. ob has no buffer afterwards. */
char *ob_detach(struct outbuf *ob, size_t *cap, size_t *dirty);

/* Makes room for more bytes after len. Returns 0, -ENOMEM, or -ENOBUFS
 * when the limit forbids it; the contents are unchanged either way. */
int ob_reserve(struct outbuf *ob, size_t more);

/* Appends; returns 0, -ENOMEM or -ENOBUFS (the buffer is unchanged then). */
int ob_append(struct outbuf *ob, const void *data, size_t len);
int ob_puts(struct outbuf *ob, const char *s);
int ob_printf(struct outbuf *ob, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int ob_vprintf(struct outbuf *ob, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/* Drops the first n bytes (n <= len): they were sent. */
void ob_consume(struct outbuf *ob, size_t n);

/* Cuts the contents back to len bytes (a mark taken earlier). */
void ob_truncate(struct outbuf *ob, size_t len);

/* Gives memory back: the capacity drops to cap, or to len if that is more.
 * A failed allocation leaves the buffer as it was. */
void ob_shrink(struct outbuf *ob, size_t cap);

/* A new buffer of cap bytes holding old's first len bytes, old's first
 * dirty bytes wiped and old freed (NULL: none); NULL when memory cannot
 * be had, old untouched. The one way bytes that may be secret move to a
 * bigger buffer (outbuf's growth, server/listing.c's). */
char *ob_move_wiped(char *old, size_t len, size_t dirty, size_t cap);

#endif
