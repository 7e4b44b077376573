/* store.h -- the people: entries in a red-black tree keyed by (last, first).
 *
 * Nothing here locks. Every function ending in _locked expects the caller
 * to hold the store lock as the lock policy defines it (lockmode.h); in
 * nolock mode nobody does, which is the point of that mode. Pointers a
 * _locked lookup returns are borrowed while the lock is held.
 *
 * Every change goes through store_apply_locked: the one place a journal will
 * hook in.
 */
#ifndef SSN_STORE_H
#define SSN_STORE_H

#include <stddef.h>
#include "entry.h"
#include "rbtree.h"

struct store {
    struct rb_tree tree;        /* protected by the store lock */
};

enum store_op {
    STORE_ADD,                  /* link m->entry (caller-allocated) */
    STORE_DELETE,               /* unlink the entry named by m->entry */
};

struct store_mutation {
    enum store_op op;
    struct entry *entry;        /* ADD: the new entry; DELETE: a probe */
    struct entry *removed;      /* DELETE: the unlinked entry, for the
                                   caller to free after unlocking */
};

/* pause/arg, when pause is set, run inside insert and erase between finding
 * the place and relinking (the race window of docs/RACES.md). */
void store_init(struct store *s, rb_pause_fn pause, void *arg);

/* Frees every entry. Only when no session can touch the store. */
void store_destroy(struct store *s);

/* Applies one mutation. Returns 0; -EEXIST for an ADD whose name is present
 * (the store is unchanged and the caller still owns m->entry); -ENOENT for a
 * DELETE of an absent name. On success of an ADD the store owns m->entry; on
 * success of a DELETE the caller owns m->removed. Never allocates. */
int store_apply_locked(struct store *s, struct store_mutation *m);

/* The entry named by probe's first and last names, or NULL. */
const struct entry *store_find_locked(const struct store *s,
                                      const struct entry *probe);

size_t store_count_locked(const struct store *s);

/* NULL when every tree invariant holds, else the broken one's name. */
const char *store_check_locked(const struct store *s);

/* Calls fn on every entry in tree order; stops early when fn returns
 * non-zero and returns that value, else 0. */
int store_foreach_locked(const struct store *s,
                         int (*fn)(const struct entry *e, void *arg),
                         void *arg);

/* Entry allocation and release, outside the lock. entry_free wipes the SSN
 * before the memory goes back (it is personal data). */
struct entry *store_entry_new(void);
void store_entry_free(struct entry *e);

#endif
