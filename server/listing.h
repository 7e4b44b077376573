/* listing.h -- PRINT's whole reply, formatted once and shared. buffered
 * mode formats the listing under the store lock and sends it after
 * releasing the lock; while the store has not changed, every session that
 * asks gets the same immutable listing, so N clients printing a large store
 * cost one copy of it, not N. The store keeps the latest (store.h).
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
    char *data;                 /* head, one line per entry, tail */
};

/* The listing of st as it is now: the cached one when st has not changed
 * since it was built, else a new one (which replaces the cache; the old
 * cache's reference goes to *stale, for the caller to drop after leaving
 * the store). The caller holds the store as its policy requires and owns
 * one reference to the result. NULL when memory ran out. */
struct listing *listing_get_locked(struct store *st, struct listing **stale);

/* Drops one reference; the last one wipes (SSNs are personal data) and
 * frees. NULL is allowed. Needs no lock. */
void listing_put(struct listing *l);

#endif
