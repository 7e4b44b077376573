/* listing.c -- PRINT's reply formatted once and shared, and the replies
 * built the same way (listing.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "listing.h"
#include "outbuf.h"
#include "store.h"

#define LISTING_INITIAL 4096    /* first allocation; doubles as needed */
#define LISTING_LINE    52      /* a PRINT line with names of 30 bytes or
                                   less together, and a 3-digit age */

/* Moves l's bytes to a buffer of cap bytes and wipes the old one. */
static int grow(struct listing *l, size_t cap)
{
    char *p = ob_move_wiped(l->data, l->len, l->len, cap);

    if (!p)
        return -ENOMEM;
    l->data = p;
    l->cap = cap;
    return 0;
}

struct listing *listing_new(size_t cap)
{
    struct listing *l = calloc(1, sizeof(*l));

    if (!l)
        return NULL;
    atomic_init(&l->refs, 1);
    if (cap && grow(l, cap)) {
        free(l);
        return NULL;
    }
    return l;
}

int listing_append(struct listing *l, const void *data, size_t len,
                   size_t limit)
{
    if (limit && l->len + len > limit)
        return -ENOBUFS;
    if (l->len + len > l->cap) {
        size_t cap = l->cap ? l->cap : LISTING_INITIAL;
        while (cap < l->len + len)
            cap *= 2;
        if (limit && cap > limit)
            cap = limit;
        if (grow(l, cap))
            return -ENOMEM;
    }
    memcpy(l->data + l->len, data, len);
    l->len += len;
    return 0;
}

static int append_entry(const struct entry *e, void *arg)
{
    char line[ENTRY_LINE_MAX];
    size_t n = entry_format_print(e, line);

    return listing_append(arg, line, n, 0);
}

/* O(n) formatting and allocation under the store lock: the price buffered
 * mode pays once per change of the store, so that writing to slow clients
 * happens outside it. */
static struct listing *build_locked(struct store *st)
{
    /* Sized once from the count: most lines are LISTING_LINE bytes, so
     * growing (a copy and a wipe of everything so far) is rare. */
    struct listing *l = listing_new(store_count_locked(st) * LISTING_LINE +
                                    2 * sizeof(ENTRY_PRINT_HEAD));

    if (!l)
        return NULL;
    l->version = st->version;
    if (listing_append(l, ENTRY_PRINT_HEAD, sizeof(ENTRY_PRINT_HEAD) - 1,
                       0) ||
        store_foreach_locked(st, append_entry, l) ||
        listing_append(l, ENTRY_PRINT_TAIL, sizeof(ENTRY_PRINT_TAIL) - 1,
                       0)) {
        listing_put(l);
        return NULL;
    }
    return l;
}

struct listing *listing_get_locked(struct store *st, struct listing **stale)
{
    struct listing *l = st->listing;

    *stale = NULL;
    if (l && l->version == st->version) {
        atomic_fetch_add(&l->refs, 1);
        return l;
    }
    l = build_locked(st);
    if (l) {
        *stale = st->listing;
        atomic_fetch_add(&l->refs, 1);  /* the cache's own reference */
        st->listing = l;
    }
    return l;
}

void listing_put(struct listing *l)
{
    if (!l || atomic_fetch_sub(&l->refs, 1) != 1)
        return;
    if (l->data) {
        explicit_bzero(l->data, l->len);
        free(l->data);
    }
    free(l);
}
