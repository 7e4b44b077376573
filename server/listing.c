/* listing.c -- PRINT's reply formatted once and shared (listing.h). */
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include "listing.h"
#include "store.h"

#define LISTING_INITIAL 4096    /* first allocation; doubles as needed */
#define LISTING_LINE    52      /* a PRINT line with names of 30 bytes or
                                   less together, and a 3-digit age */

struct build {
    struct listing *l;
    size_t cap;
};

static int append(struct build *b, const char *data, size_t len)
{
    struct listing *l = b->l;

    if (l->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : LISTING_INITIAL;
        while (cap < l->len + len)
            cap *= 2;
        char *p = malloc(cap);  /* not realloc: the old copy is wiped */
        if (!p)
            return -1;
        if (l->data) {
            memcpy(p, l->data, l->len);
            OPENSSL_cleanse(l->data, l->len);
            free(l->data);
        }
        l->data = p;
        b->cap = cap;
    }
    memcpy(l->data + l->len, data, len);
    l->len += len;
    return 0;
}

static int append_entry(const struct entry *e, void *arg)
{
    char line[ENTRY_LINE_MAX];
    size_t n = entry_format_print(e, line);

    return append(arg, line, n);
}

/* O(n) formatting and allocation under the store lock: the price buffered
 * mode pays once per change of the store, so that writing to slow clients
 * happens outside it. */
static struct listing *build_locked(const struct store *st)
{
    struct build b = { .l = calloc(1, sizeof(struct listing)), .cap = 0 };

    if (!b.l)
        return NULL;
    /* Sized once from the count: most lines are LISTING_LINE bytes, so
     * growing (a copy and a wipe of everything so far) is rare. */
    b.cap = st->tree.count * LISTING_LINE + 2 * sizeof(ENTRY_PRINT_HEAD);
    b.l->data = malloc(b.cap);
    if (!b.l->data)
        b.cap = 0;
    atomic_init(&b.l->refs, 1);
    b.l->version = st->version;
    if (append(&b, ENTRY_PRINT_HEAD, sizeof(ENTRY_PRINT_HEAD) - 1) ||
        store_foreach_locked(st, append_entry, &b) ||
        append(&b, ENTRY_PRINT_TAIL, sizeof(ENTRY_PRINT_TAIL) - 1)) {
        listing_put(b.l);
        return NULL;
    }
    return b.l;
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
        OPENSSL_cleanse(l->data, l->len);
        free(l->data);
    }
    free(l);
}
