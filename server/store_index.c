/* store_index.c -- the hash index of the store's people by name
 * (store_index.h): open addressing, linear probing, one word per slot
 * (address and hash tag), removal by backward shift (Knuth's Algorithm R
 * for linear probing), growth by doubling, drained incrementally. Runs
 * under the store lock.
 *
 * The drain moves whole probe runs (clusters: slots between two empty
 * ones). It starts at an empty slot of the old table and never stops
 * inside a run, so every run left in the old table is whole and its
 * lookups and backward shifts work as before; nothing is inserted there.
 */
#include <stdlib.h>
#include <string.h>
#include "siphash.h"
#include "store_index.h"

#define SINDEX_FIRST_SLOTS 1024
#define SINDEX_DRAIN_STEP  8    /* entries moved per insert or removal, at
                                   least (a run is never cut) */
#define SINDEX_DRAIN_BATCH 16   /* entries whose names are asked for at once */
#define ADDR_BITS 48
#define ADDR_MASK ((UINT64_C(1) << ADDR_BITS) - 1)

static uint64_t tag_of(uint64_t h)
{
    return h & ~ADDR_MASK;
}

static struct entry *entry_of(uint64_t slot)
{
    return (struct entry *)(uintptr_t)(slot & ADDR_MASK);
}

/* SipHash-1-3 over "last\0first", keyed at random (siphash.h): where a
 * name lands is unknown to the client that chose it, so no client can
 * line names up in one probe run and make every lookup that meets it walk
 * the run, under the store lock (tests/check_store_index.c
 * test_sindex_names_lined_up_for_one_key_scatter_under_another). The names
 * are at most ENTRY_NAME_MAX bytes; a longer one is hashed by its first
 * ENTRY_NAME_MAX, alike for equal names. */
uint64_t sindex_hash(const struct store_index *ix, const char *last,
                     const char *first)
{
    return sindex_hash_len(ix, last, strnlen(last, ENTRY_NAME_MAX), first,
                           strnlen(first, ENTRY_NAME_MAX));
}

uint64_t sindex_hash_len(const struct store_index *ix, const char *last,
                         size_t ll, const char *first, size_t fl)
{
    char buf[2 * ENTRY_NAME_MAX + 1];

    ll = ll < ENTRY_NAME_MAX ? ll : ENTRY_NAME_MAX;
    fl = fl < ENTRY_NAME_MAX ? fl : ENTRY_NAME_MAX;
    memcpy(buf, last, ll);
    buf[ll] = '\0';
    memcpy(buf + ll + 1, first, fl);
    return siphash13(&ix->key, buf, ll + 1 + fl);
}

/* sindex_hash of e's names, read where e keeps them: "last\0first". */
static uint64_t entry_hash(const struct store_index *ix, const struct entry *e)
{
    size_t fl = strnlen(entry_first(e), ENTRY_NAME_MAX);

    return siphash13(&ix->key, e->names, (size_t)e->last_len + 1 + fl);
}

/* ---- one table ----------------------------------------------------------- */

static int table_new(struct sindex_table *t, size_t n)
{
    t->slots = calloc(n, sizeof(*t->slots));
    t->mask = t->slots ? n - 1 : 0;
    t->count = 0;
    return t->slots ? 0 : -1;
}

static void table_free(struct sindex_table *t)
{
    free(t->slots);
    t->slots = NULL;
    t->mask = t->count = 0;
}

static struct entry *table_find(const struct sindex_table *t,
                                const struct entry_key *key, uint64_t h)
{
    uint64_t tag = tag_of(h), s;

    for (size_t i = h & t->mask; (s = t->slots[i]); i = (i + 1) & t->mask) {
        if (tag_of(s) != tag)
            continue;
        struct entry *e = entry_of(s);
        if (strcmp(entry_last(e), key->last) == 0 &&
            strcmp(entry_first(e), key->first) == 0)
            return e;
    }
    return NULL;
}

static void table_place(struct sindex_table *t, uint64_t slot, uint64_t h)
{
    size_t i = h & t->mask;

    while (t->slots[i])
        i = (i + 1) & t->mask;
    t->slots[i] = slot;
    t->count++;
}

/* Removes e (hash h); 0, or -1 when this table does not hold it. An entry
 * further along the run moves into the hole unless its home slot lies
 * cyclically in (hole, its place]. */
static int table_remove(const struct store_index *ix, struct sindex_table *t,
                        const struct entry *e, uint64_t h)
{
    size_t i = h & t->mask, j, home;

    for (; entry_of(t->slots[i]) != e; i = (i + 1) & t->mask)
        if (!t->slots[i])
            return -1;
    t->slots[i] = 0;
    t->count--;
    for (j = i;;) {
        j = (j + 1) & t->mask;
        if (!t->slots[j])
            break;
        home = entry_hash(ix, entry_of(t->slots[j])) & t->mask;
        if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
            continue;
        t->slots[i] = t->slots[j];
        t->slots[j] = 0;
        i = j;
    }
    return 0;
}

/* ---- the index ------------------------------------------------------------ */

static void turn_off(struct store_index *ix)
{
    table_free(&ix->now);
    table_free(&ix->old);
    ix->scan = ix->scan_left = ix->count = 0;
}

void sindex_init(struct store_index *ix)
{
    ix->old.slots = NULL;
    ix->old.mask = ix->old.count = 0;
    ix->scan = ix->scan_left = ix->count = 0;
    ix->now.slots = NULL;
    ix->now.mask = ix->now.count = 0;
    /* No key, no index: names a client could line up stay out of it, and
     * the store searches the tree. */
    if (siphash_key_random(&ix->key) == 0)
        table_new(&ix->now, SINDEX_FIRST_SLOTS);
}

void sindex_destroy(struct store_index *ix)
{
    turn_off(ix);
}

struct entry *sindex_find(const struct store_index *ix,
                          const struct entry_key *key, uint64_t h)
{
    struct entry *e = table_find(&ix->now, key, h);

    if (!e && ix->old.slots)
        e = table_find(&ix->old, key, h);
    return e;
}

void sindex_prefetch(const struct store_index *ix, uint64_t h)
{
    if (ix->now.slots)
        __builtin_prefetch(&ix->now.slots[h & ix->now.mask]);
    if (ix->old.slots)
        __builtin_prefetch(&ix->old.slots[h & ix->old.mask]);
}

void sindex_prefetch_entry(const struct store_index *ix, uint64_t h)
{
    const struct sindex_table *t = &ix->now;
    uint64_t s;

    if (t->slots && (s = t->slots[h & t->mask]) && tag_of(s) == tag_of(h))
        __builtin_prefetch(entry_of(s));
}

/* Moves up to SINDEX_DRAIN_BATCH entries of the run at ix->scan to the
 * new table: each entry's hash is read from its names, a cache miss each,
 * so all of them are asked for first, then all the new slots, then they
 * move. Returns how many moved. */
static size_t move_piece(struct store_index *ix)
{
    struct sindex_table *o = &ix->old;
    uint64_t slot[SINDEX_DRAIN_BATCH], h[SINDEX_DRAIN_BATCH];
    size_t n = 0, i = ix->scan;

    for (; n < SINDEX_DRAIN_BATCH && o->slots[i]; n++, i = (i + 1) & o->mask) {
        slot[n] = o->slots[i];
        __builtin_prefetch(entry_of(slot[n]));
        __builtin_prefetch((const char *)entry_of(slot[n]) + 48);
    }
    for (size_t k = 0; k < n; k++) {
        h[k] = entry_hash(ix, entry_of(slot[k]));
        __builtin_prefetch(&ix->now.slots[h[k] & ix->now.mask]);
    }
    for (size_t k = 0; k < n; k++) {
        table_place(&ix->now, slot[k], h[k]);
        o->slots[ix->scan] = 0;
        o->count--;
        ix->scan = (ix->scan + 1) & o->mask;
        ix->scan_left--;
    }
    return n;
}

/* Moves at least step entries (whole runs) from the old table to the new
 * one; frees the old table once it is drained. */
static void drain(struct store_index *ix, size_t step)
{
    struct sindex_table *o = &ix->old;
    size_t moved = 0;

    while (o->slots && moved < step && ix->scan_left) {
        while (o->slots[ix->scan])              /* a whole run */
            moved += move_piece(ix);
        if (ix->scan_left) {                    /* the empty slot after it */
            ix->scan = (ix->scan + 1) & o->mask;
            ix->scan_left--;
        }
    }
    if (o->slots && (!ix->scan_left || !o->count))
        table_free(o);
}

/* Whether n entries would fill more than three quarters of slots: the
 * table always keeps a quarter empty, so every probe run ends. */
static int too_full(size_t n, size_t slots)
{
    return n * 4 > slots * 3;
}

/* Twice the slots: the full table becomes the old one, drained from an
 * empty slot on. Returns 0, or -1 when there is no memory for it. */
static int grow(struct store_index *ix)
{
    struct sindex_table t;

    drain(ix, (size_t)-1);              /* the last growth's, if any left */
    if (table_new(&t, (ix->now.mask + 1) * 2))
        return -1;
    ix->old = ix->now;
    ix->now = t;
    for (ix->scan = 0; ix->old.slots[ix->scan]; ix->scan++)
        ;                               /* below 3/4 full: one is empty */
    ix->scan_left = ix->old.mask + 1;
    return 0;
}

void sindex_reserve(struct store_index *ix, size_t n)
{
    struct sindex_table t;
    size_t slots = ix->now.mask + 1;

    if (!sindex_on(ix) || ix->count || ix->old.slots)
        return;
    while (too_full(n, slots))
        slots *= 2;
    if (slots == ix->now.mask + 1 || table_new(&t, slots))
        return;                         /* no memory: grow as it goes */
    table_free(&ix->now);
    ix->now = t;
}

void sindex_insert(struct store_index *ix, struct entry *e, uint64_t h)
{
    uint64_t addr = (uint64_t)(uintptr_t)e;

    if (!sindex_on(ix))
        return;
    drain(ix, SINDEX_DRAIN_STEP);
    /* An address beyond 48 bits cannot be packed with its tag, and
     * without memory to grow there is no room. Either way the tree still
     * finds everyone. */
    if (addr & ~ADDR_MASK ||
        (too_full(ix->count + 1, ix->now.mask + 1) && grow(ix))) {
        turn_off(ix);
        return;
    }
    table_place(&ix->now, tag_of(h) | addr, h);
    ix->count++;
}

void sindex_remove(struct store_index *ix, const struct entry *e, uint64_t h)
{
    if (!sindex_on(ix))
        return;
    drain(ix, SINDEX_DRAIN_STEP);
    if (table_remove(ix, &ix->now, e, h) == 0 ||
        (ix->old.slots && table_remove(ix, &ix->old, e, h) == 0))
        ix->count--;
}
