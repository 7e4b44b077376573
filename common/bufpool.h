/* bufpool.h -- a small free list of equal-sized buffers, for one thread
 * (no lock). A server's event worker keeps one per kind of session buffer
 * and lends them to its connections only while a request is in progress
 * (memcached's rbuf cache in thread.c): an idle connection holds none.
 *
 * Buffers held SSNs and passwords: whatever comes back is wiped (the bytes
 * its user wrote, `dirty`) before it is kept as a spare or freed. At most
 * `max` spares are kept; beyond that, and for buffers of another size (a
 * reply buffer that grew), they are freed.
 */
#ifndef SSN_BUFPOOL_H
#define SSN_BUFPOOL_H

#include <stddef.h>

#define BUFPOOL_MAX_SPARE 64    /* most spare buffers one pool may keep */

struct bufpool {
    size_t size;                /* bytes per buffer */
    int max;                    /* spares kept at most (<= BUFPOOL_MAX_SPARE) */
    int nspare;                 /* spare[0..nspare) are free, wiped */
    void *spare[BUFPOOL_MAX_SPARE];
    unsigned long allocs;       /* buffers malloc'ed: the pool was empty */
    unsigned long frees;        /* buffers freed: the pool was full, or of
                                   another size */
};

/* Buffers of size bytes, at most max spares (capped at BUFPOOL_MAX_SPARE;
 * 0: every buffer given back is freed). */
void bufpool_init(struct bufpool *p, size_t size, int max);

/* Frees the spares. Buffers still lent out are their holders'. */
void bufpool_destroy(struct bufpool *p);

/* A buffer of p->size bytes (a spare, or malloc'ed when there is none);
 * its contents are unspecified. NULL when memory cannot be had. */
void *bufpool_get(struct bufpool *p);

/* The same in two halves, for a pool shared under its owner's lock, so
 * that malloc, free and the wipe stay outside it: take returns a spare or
 * NULL (the caller mallocs p->size bytes), keep keeps a buf already wiped
 * if it is of the pool's size and there is room and returns 1, else 0
 * (the caller frees it). Counted as get and put count. */
void *bufpool_take(struct bufpool *p);
int bufpool_keep(struct bufpool *p, void *buf, size_t size);

/* Gives buf (size bytes, of which the first dirty were written) back:
 * wiped, then kept as a spare if it is of the pool's size and there is
 * room, else freed. buf NULL: nothing. */
void bufpool_put(struct bufpool *p, void *buf, size_t size, size_t dirty);

#endif
