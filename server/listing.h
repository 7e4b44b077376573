/* listing.h -- PRINT's whole reply, formatted once and shared. buffered
 * mode formats the listing under the store lock and sends it after
 * releasing the lock; while the store has not changed, every session that
 * asks gets the same immutable listing, so N clients printing a large store
 * cost one copy of it, not N. The store keeps the latest (store.h).
 *
 * A large reply of one session's own (TREE's drawing, tree.c) is built as
 * a listing too (listing_new, listing_append), outside the store, so that
 * it reaches the driver, and the reply budget (budget.h), the way PRINT's
 * does.
 *
 * A listing is immutable once built; its reference count is atomic, so
 * sessions drop their references without any lock.
 */
#ifndef SSN_LISTING_H
#define SSN_LISTING_H

#include <stdatomic.h>
#include <stddef.h>

struct store;

struct listing {
    atomic_int refs;
    unsigned long version;      /* the store's version it shows */
    size_t len;
    size_t cap;                 /* bytes allocated at data (while built) */
    char *data;                 /* head, one line per entry, tail */
};

/* The listing of st as it is now: the cached one when st has not changed
 * since it was built, else a new one (which replaces the cache; the old
 * cache's reference goes to *stale, for the caller to drop after leaving
 * the store). The caller holds the store as its policy requires and owns
 * one reference to the result. NULL when memory ran out. */
struct listing *listing_get_locked(struct store *st, struct listing **stale);

/* An empty listing that is no store's (version 0), with room for cap
 * bytes (0: nothing allocated until the first listing_append), one
 * reference the caller's; NULL when memory cannot be had. */
struct listing *listing_new(size_t cap);

/* Appends len bytes at data to l, which nobody else holds yet, growing by
 * copy and wipe. Returns 0; -ENOBUFS when l would pass limit bytes (0: no
 * limit); -ENOMEM. l is unchanged on error. */
int listing_append(struct listing *l, const void *data, size_t len,
                   size_t limit);

/* Drops one reference; the last one wipes (SSNs are personal data) and
 * frees. NULL is allowed. Needs no lock. */
void listing_put(struct listing *l);

#endif
