/* store_index.h -- a hash index of the store's people by name, beside the
 * tree: FIND, DELETE and ADD's duplicate check find a person in one or two
 * probes instead of a walk of 20 to 40 nodes, each a likely cache miss.
 * The tree stays the store: its order is PRINT's, DIGEST's and the
 * journal's; the index only finds an entry that the tree holds.
 *
 * Open addressing with linear probing and no tombstones (a removal shifts
 * the probe run back). A slot is one word: the entry's address in its low
 * 48 bits, 16 bits of the name's hash above them, so a probe that misses
 * does not touch the entry. It grows to twice its size when three quarters
 * full, incrementally as Redis's dict does: the old table is drained a few
 * probe runs at a time by the inserts and removals that follow, and a
 * lookup meanwhile looks in both, so no single call holds the store lock
 * for the whole rehash (at 10^6 people a rehash in one go held it about
 * 140 ms). When it cannot grow (out of memory, or an address that does not
 * fit 48 bits), it turns itself off and the store searches the tree.
 *
 * Every function runs under the store lock (store.h); the index has no
 * lock of its own.
 */
#ifndef SSN_STORE_INDEX_H
#define SSN_STORE_INDEX_H

#include <stddef.h>
#include <stdint.h>
#include "entry.h"
#include "siphash.h"

struct sindex_table {
    uint64_t *slots;            /* NULL: no table */
    size_t mask;                /* slots - 1; a power of two minus one */
    size_t count;               /* entries in this table */
};

struct store_index {
    struct sindex_table now;    /* where inserts go; slots NULL: off */
    struct sindex_table old;    /* being drained after a growth, or none */
    size_t scan;                /* old: the next slot to drain */
    size_t scan_left;           /* old: slots not yet drained */
    size_t count;               /* entries indexed, in both tables */
    struct siphash_key key;     /* drawn at random by sindex_init, then
                                   only read (sindex_hash: also without
                                   the store lock, by the look-ahead) */
};

/* Starts an index with a key of its own; off (and harmless) when it
 * cannot allocate or draw the key. */
void sindex_init(struct store_index *ix);
void sindex_destroy(struct store_index *ix);

static inline int sindex_on(const struct store_index *ix)
{
    return ix->now.slots != NULL;
}

/* The hash of a name, as ix uses it: keyed by ix's own random key. */
uint64_t sindex_hash(const struct store_index *ix, const char *last,
                     const char *first);
/* The same for names whose lengths the caller knows (ll and fl bytes). */
uint64_t sindex_hash_len(const struct store_index *ix, const char *last,
                         size_t ll, const char *first, size_t fl);

/* The entry named key (hash h), or NULL. Only when sindex_on. */
struct entry *sindex_find(const struct store_index *ix,
                          const struct entry_key *key, uint64_t h);

/* Asks the cache for the slots a lookup of hash h starts at (a hint: no
 * effect on what the index holds). Only when sindex_on. */
void sindex_prefetch(const struct store_index *ix, uint64_t h);

/* The entry in the slot a lookup of hash h starts at, asked for when its
 * tag matches (after sindex_prefetch has brought the slot: a hint). */
void sindex_prefetch_entry(const struct store_index *ix, uint64_t h);

/* Indexes e, whose name (hash h) is not indexed yet. May grow the table,
 * or turn the index off; never fails. */
void sindex_insert(struct store_index *ix, struct entry *e, uint64_t h);

/* An empty index made big enough for n entries at once, so that filling
 * it (a journal's replay) neither doubles nor drains on the way. Does
 * nothing when it holds anyone, or when there is no memory for it. */
void sindex_reserve(struct store_index *ix, size_t n);

/* Removes e (hash h), which is indexed. */
void sindex_remove(struct store_index *ix, const struct entry *e, uint64_t h);

#endif
