/* store.h -- the people: entries in a red-black tree keyed by (last, first),
 * and the lock that guards them.
 *
 * The store owns its mutex but does not decide when it is taken: the lock
 * policy does (lockmode.h), through store_lock/store_unlock. Every function
 * ending in _locked expects the caller to hold the store as the policy
 * defines it, and asserts so (in nolock and serial no lock exists, and the
 * assertion knows it). Pointers a _locked lookup returns are borrowed while
 * the store is held: copy what you need before leaving it.
 *
 * Every change goes through store_apply_locked: the one place a journal will
 * hook in.
 */
#ifndef SSN_STORE_H
#define SSN_STORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include "entry.h"
#include "rbtree.h"

struct lock_policy;

/* What a store operation does to the people, for the lock hooks. */
enum store_access {
    STORE_READ,
    STORE_WRITE,
};

struct store {
    /* lock guards tree and every entry linked into it. When it is taken
     * and for how long is the policy's choice. */
    pthread_mutex_t lock;
    atomic_ulong owner;         /* the pthread_t holding lock, 0 when none;
                                   written only by the holder */
    const struct lock_policy *policy;   /* set once by store_init */
    struct rb_tree tree;        /* protected by lock */

    /* The race window of docs/RACES.md: called, when set, inside every
     * insert and delete between finding the place and relinking. Set once
     * before any session starts; NULL in normal runs. */
    void (*pause)(void *arg);
    void *pause_arg;
};

enum store_op {
    STORE_ADD,                  /* link m->entry (caller-allocated) */
    STORE_DELETE,               /* unlink the entry named by m->key */
};

struct store_mutation {
    enum store_op op;
    struct entry *entry;        /* ADD: the new entry */
    struct entry_key key;       /* DELETE: the names */
    struct entry *removed;      /* DELETE: the unlinked entry, for the
                                   caller to free after leaving the store */
};

/* Returns 0, or -errno when the mutex cannot be made. */
int store_init(struct store *st, const struct lock_policy *policy);

/* Frees every entry. Only when no session can touch the store. */
void store_destroy(struct store *st);

/* The mutex, for the lock policy's hooks. Each returns 0 or -errno. */
int store_lock(struct store *st);
int store_unlock(struct store *st);

/* 1 when the calling thread holds st->lock. */
int store_lock_owned(const struct store *st);

/* Applies one mutation. Returns 0; -EEXIST for an ADD whose name is present
 * (the store is unchanged and the caller still owns m->entry); -ENOENT for a
 * DELETE of an absent name. On success of an ADD the store owns m->entry; on
 * success of a DELETE the caller owns m->removed. Never allocates. */
int store_apply_locked(struct store *st, struct store_mutation *m);

/* The entry with key's names, or NULL. */
const struct entry *store_find_locked(const struct store *st,
                                      const struct entry_key *key);

size_t store_count_locked(const struct store *st);

/* NULL when every tree invariant holds, else the broken one's name. */
const char *store_check_locked(const struct store *st);

/* Calls fn on every entry in tree order; stops early when fn returns
 * non-zero and returns that value, else 0. */
int store_foreach_locked(const struct store *st,
                         int (*fn)(const struct entry *e, void *arg),
                         void *arg);

/* Entry allocation and release, outside the lock. store_entry_free wipes
 * the SSN before the memory goes back (it is personal data). */
struct entry *store_entry_new(void);
void store_entry_free(struct entry *e);

#endif
