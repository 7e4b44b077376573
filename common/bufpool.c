/* bufpool.c -- a bounded free list of equal-sized buffers (bufpool.h). */
#include <stdlib.h>
#include <string.h>
#include "bufpool.h"

void bufpool_init(struct bufpool *p, size_t size, int max)
{
    p->size = size;
    p->max = max < 0 ? 0 : max > BUFPOOL_MAX_SPARE ? BUFPOOL_MAX_SPARE : max;
    p->nspare = 0;
    p->allocs = p->frees = 0;
}

void bufpool_destroy(struct bufpool *p)
{
    while (p->nspare > 0)
        free(p->spare[--p->nspare]);    /* wiped when they came back */
}

void *bufpool_take(struct bufpool *p)
{
    if (p->nspare > 0)
        return p->spare[--p->nspare];
    p->allocs++;                        /* the caller allocates one */
    return NULL;
}

int bufpool_keep(struct bufpool *p, void *buf, size_t size)
{
    if (size == p->size && p->nspare < p->max) {
        p->spare[p->nspare++] = buf;
        return 1;
    }
    p->frees++;                         /* the caller frees it */
    return 0;
}

void *bufpool_get(struct bufpool *p)
{
    void *buf = bufpool_take(p);

    return buf ? buf : malloc(p->size);
}

void bufpool_put(struct bufpool *p, void *buf, size_t size, size_t dirty)
{
    if (!buf)
        return;
    explicit_bzero(buf, dirty < size ? dirty : size);
    if (!bufpool_keep(p, buf, size))
        free(buf);
}
