/* storetest.h -- the fixture and helpers shared by the store's unit tests
 * (check_store.c, check_store_limits.c): a store under the serial policy
 * (one thread owns it and no lock exists), entries made from literals, and
 * ADD, DELETE and FIND through the store's one mutation function. static
 * inline so each test file takes only what it uses; each file gets its own
 * copy of the fixture.
 */
#ifndef SSN_TESTS_STORETEST_H
#define SSN_TESTS_STORETEST_H

#include <string.h>
#include <check.h>
#include "entry.h"
#include "../server/lockmode.h"
#include "../server/store.h"

static struct store st;

static inline void setup(void)
{
    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_SERIAL]), 0);
}

static inline void teardown(void)
{
    store_destroy(&st);
}

static inline struct entry *new_entry(const char *first, const char *last,
                                      int age, const char *ssn)
{
    struct entry *e = entry_new(last, strlen(last), first, strlen(first),
                                entry_ssn_pack(ssn), age);

    ck_assert_ptr_nonnull(e);
    return e;
}

/* A lookup key: the two names only. */
static inline struct entry_key key(const char *first, const char *last)
{
    return (struct entry_key){ .last = last, .first = first };
}

static inline int add(struct entry *e)
{
    struct store_mutation m = { .op = STORE_ADD, .entry = e };
    return store_apply_locked(&st, &m);
}

/* Deletes first/last; returns the result and puts the unlinked entry (or
 * what m.removed held, NULL to start with) into *removed. */
static inline int del(const char *first, const char *last,
                      struct entry **removed)
{
    struct store_mutation m = { .op = STORE_DELETE, .key = key(first, last) };
    int rc = store_apply_locked(&st, &m);

    *removed = m.removed;
    return rc;
}

static inline const struct entry *find(const char *first, const char *last)
{
    struct entry_key k = key(first, last);
    return store_find_locked(&st, &k);
}

#endif
