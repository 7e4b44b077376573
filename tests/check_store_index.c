/* check_store_index.c -- unit tests for server/store_index.c: finds what
 * was inserted and nothing else, through growth; removal by backward shift
 * keeps every other entry findable, also when probe runs wrap around the
 * end of the table; a run longer than one piece of the drain moved whole;
 * a random sequence of inserts and removals against a
 * simple reference; and the whole store with its index under CHECK. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "../server/lockmode.h"
#include "../server/store.h"
#include "../server/store_index.h"

#define N 6000

static struct entry *people[N];
static int present[N];

static struct entry *person(int i)
{
    char last[16], first[16];
    int nl = snprintf(last, sizeof(last), "L%d", i % 97);
    int nf = snprintf(first, sizeof(first), "f%d", i);
    struct entry *e = entry_new(last, (size_t)nl, first, (size_t)nf,
                                123456789, 30);
    ck_assert_ptr_nonnull(e);
    return e;
}

static struct entry_key key_of(const struct entry *e)
{
    return (struct entry_key){ .last = entry_last(e), .first = entry_first(e) };
}

static uint64_t hash_of(const struct store_index *ix, const struct entry *e)
{
    return sindex_hash(ix, entry_last(e), entry_first(e));
}

static void setup(void)
{
    for (int i = 0; i < N; i++) {
        people[i] = person(i);
        present[i] = 0;
    }
}

static void teardown(void)
{
    for (int i = 0; i < N; i++)
        entry_free(people[i]);
}

/* Every present person is found as itself; every absent one is not. */
static void expect_all(const struct store_index *ix)
{
    size_t n = 0;

    for (int i = 0; i < N; i++) {
        struct entry_key k = key_of(people[i]);
        struct entry *got = sindex_find(ix, &k, hash_of(ix, people[i]));
        ck_assert_ptr_eq(got, present[i] ? people[i] : NULL);
        n += (size_t)present[i];
    }
    ck_assert_uint_eq(ix->count, n);
}

/* expect_all over the first n people only (the others are absent). */
static void expect_all_upto(const struct store_index *ix, int n)
{
    for (int i = 0; i < n; i++) {
        struct entry_key k = key_of(people[i]);
        ck_assert_ptr_eq(sindex_find(ix, &k, hash_of(ix, people[i])),
                         present[i] ? people[i] : NULL);
    }
}

START_TEST(test_sindex_grows_and_finds)
{
    struct store_index ix;

    sindex_init(&ix);
    ck_assert(sindex_on(&ix));
    size_t first_slots = ix.now.mask + 1;
    int drained_in_steps = 0;
    for (int i = 0; i < N; i++) {
        sindex_insert(&ix, people[i], hash_of(&ix, people[i]));
        present[i] = 1;
        if (ix.old.slots) {     /* mid-drain: both tables hold people */
            drained_in_steps |= ix.old.count > 0 && ix.now.count > 1;
            if (i % 7 == 0)
                expect_all_upto(&ix, i + 1);
        }
    }
    ck_assert(sindex_on(&ix));
    ck_assert(drained_in_steps);
    ck_assert_uint_gt(ix.now.mask + 1, first_slots);
    ck_assert_uint_le(ix.count * 4, (ix.now.mask + 1) * 3);
    ck_assert_uint_eq(ix.now.count + ix.old.count, ix.count);
    expect_all(&ix);
    sindex_destroy(&ix);
    ck_assert(!sindex_on(&ix));
}
END_TEST

START_TEST(test_sindex_remove_keeps_the_others)
{
    struct store_index ix;

    sindex_init(&ix);
    for (int i = 0; i < N; i++) {
        sindex_insert(&ix, people[i], hash_of(&ix, people[i]));
        present[i] = 1;
    }
    for (int i = 0; i < N; i += 3) {
        sindex_remove(&ix, people[i], hash_of(&ix, people[i]));
        present[i] = 0;
    }
    expect_all(&ix);
    for (int i = 0; i < N; i++)
        if (present[i]) {
            sindex_remove(&ix, people[i], hash_of(&ix, people[i]));
            present[i] = 0;
        }
    expect_all(&ix);
    for (size_t i = 0; i <= ix.now.mask; i++)
        ck_assert_uint_eq(ix.now.slots[i], 0);
    ck_assert_ptr_null(ix.old.slots);
    sindex_destroy(&ix);
}
END_TEST

/* Random inserts and removals in a table that stays small (a few hundred
 * live at a time, so runs wrap around its end), checked after each step
 * against the presence flags. */
START_TEST(test_sindex_random_against_reference)
{
    struct store_index ix;
    unsigned seed = 20261122;

    sindex_init(&ix);
    for (int step = 0; step < 40000; step++) {
        int i = (int)(rand_r(&seed) % (step < 10000 ? 600 : N));
        if (present[i]) {
            sindex_remove(&ix, people[i], hash_of(&ix, people[i]));
            present[i] = 0;
        } else {
            sindex_insert(&ix, people[i], hash_of(&ix, people[i]));
            present[i] = 1;
        }
        if (step % 997 == 0)
            expect_all(&ix);
    }
    expect_all(&ix);
    sindex_destroy(&ix);
}
END_TEST

/* The store keeps the index in every locked mode and serial, not in
 * nolock; CHECK notices an index that lost someone. */
START_TEST(test_sindex_in_the_store)
{
    struct store st;
    struct store_mutation m = { .op = STORE_ADD };

    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_NOLOCK]), 0);
    ck_assert(!sindex_on(&st.index));
    store_destroy(&st);

    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_SERIAL]), 0);
    ck_assert(sindex_on(&st.index));
    for (int i = 0; i < 100; i++) {
        m.entry = person(i);
        ck_assert_int_eq(store_apply_locked(&st, &m), 0);
    }
    struct entry *again = person(7);
    m.entry = again;
    ck_assert_int_eq(store_apply_locked(&st, &m), -EEXIST);
    entry_free(again);
    struct entry_key k = key_of(people[42]);
    const struct entry *e = store_find_locked(&st, &k);
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(entry_first(e), "f42");
    ck_assert_ptr_null(store_check_locked(&st));
    sindex_remove(&st.index, e, hash_of(&st.index, e));        /* lose one */
    ck_assert_ptr_nonnull(store_check_locked(&st));
    store_destroy(&st);
}
END_TEST

/* Reserved for N first: filled without a growth or a drain; a reserve on
 * an index that holds anyone changes nothing. */
START_TEST(test_sindex_reserve)
{
    struct store_index ix;

    sindex_init(&ix);
    sindex_reserve(&ix, N);
    size_t slots = ix.now.mask + 1;
    ck_assert_uint_le((size_t)N * 4, slots * 3);
    ck_assert_uint_gt((size_t)N * 4, slots / 2 * 3);    /* not more */
    for (int i = 0; i < N; i++) {
        sindex_insert(&ix, people[i], hash_of(&ix, people[i]));
        present[i] = 1;
        ck_assert_ptr_null(ix.old.slots);
    }
    ck_assert_uint_eq(ix.now.mask + 1, slots);
    expect_all(&ix);
    sindex_reserve(&ix, 4 * N);
    ck_assert_uint_eq(ix.now.mask + 1, slots);
    expect_all(&ix);
    sindex_destroy(&ix);
}
END_TEST

/* A probe run three times longer than the drain moves at once (40 people
 * of one home slot in the first table, found by trying names): once the
 * table grows, the drain moves it whole, in pieces, and after every insert
 * of the growth each of the 40 is still found. */
START_TEST(test_sindex_long_run_drained_whole)
{
    struct store_index ix;
    struct entry *run[40];
    char first[32];
    int n = 0;

    sindex_init(&ix);
    size_t mask = ix.now.mask;
    for (int i = 0; n < 40; i++) {
        int len = snprintf(first, sizeof(first), "run%d", i);
        if ((sindex_hash(&ix, "Runner", first) & mask) != 7)
            continue;
        run[n] = entry_new("Runner", 6, first, (size_t)len, 123456789, 30);
        ck_assert_ptr_nonnull(run[n]);
        sindex_insert(&ix, run[n], hash_of(&ix, run[n]));
        n++;
    }
    int grew = 0;
    for (int i = 0; i < N && (!grew || ix.old.slots); i++) {
        sindex_insert(&ix, people[i], hash_of(&ix, people[i]));
        grew |= ix.old.slots != NULL;
        for (int k = 0; k < 40; k++) {
            struct entry_key key = key_of(run[k]);
            ck_assert_ptr_eq(sindex_find(&ix, &key, hash_of(&ix, run[k])), run[k]);
        }
    }
    ck_assert(grew);
    ck_assert_ptr_null(ix.old.slots);           /* drained */
    sindex_destroy(&ix);
    for (int k = 0; k < 40; k++)
        entry_free(run[k]);
}
END_TEST

/* The longest run of occupied slots in t, wrapping around. */
static size_t longest_run(const struct sindex_table *t)
{
    size_t best = 0, run = 0;

    for (size_t i = 0; i < 2 * (t->mask + 1); i++) {
        run = t->slots[i & t->mask] ? run + 1 : 0;
        if (run > best)
            best = run;
    }
    return best < t->mask + 1 ? best : t->mask + 1;
}

/* Hash flooding: 40 names found, by trying, to share one home slot in
 * one index make a run of 40 there; another index has a key of its own,
 * and in it the same 40 names scatter. With a hash that has no key (the
 * FNV-1a this index had before) they share a slot in every index, and
 * a client that lines up thousands makes every lookup meeting the run
 * walk it, under the store lock. */
START_TEST(test_sindex_names_lined_up_for_one_key_scatter_under_another)
{
    struct store_index a, b;
    struct entry *run[40];
    char first[32];
    int n = 0;

    sindex_init(&a);
    sindex_init(&b);
    ck_assert(sindex_on(&a) && sindex_on(&b));
    ck_assert(a.key.k0 != b.key.k0 || a.key.k1 != b.key.k1);
    for (int i = 0; n < 40; i++) {
        int len = snprintf(first, sizeof(first), "flood%d", i);
        if ((sindex_hash(&a, "Flood", first) & a.now.mask) != 7)
            continue;
        run[n] = entry_new("Flood", 5, first, (size_t)len, 123456789, 30);
        ck_assert_ptr_nonnull(run[n]);
        sindex_insert(&a, run[n], hash_of(&a, run[n]));
        sindex_insert(&b, run[n], hash_of(&b, run[n]));
        n++;
    }
    ck_assert_uint_eq(a.now.mask, b.now.mask);  /* neither grew */
    ck_assert_uint_ge(longest_run(&a.now), 40);
    /* 40 names at random in 1,024 slots: a run of 9 is far less likely
     * than one in a million. */
    ck_assert_uint_le(longest_run(&b.now), 8);
    for (int k = 0; k < 40; k++) {
        struct entry_key key = key_of(run[k]);
        ck_assert_ptr_eq(sindex_find(&b, &key, hash_of(&b, run[k])), run[k]);
    }
    sindex_destroy(&a);
    sindex_destroy(&b);
    for (int k = 0; k < 40; k++)
        entry_free(run[k]);
}
END_TEST

static Suite *store_index_suite(void)
{
    Suite *s = suite_create("store_index");
    TCase *tc = tcase_create("index");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_sindex_grows_and_finds);
    tcase_add_test(tc, test_sindex_reserve);
    tcase_add_test(tc, test_sindex_long_run_drained_whole);
    tcase_add_test(tc,
        test_sindex_names_lined_up_for_one_key_scatter_under_another);
    tcase_add_test(tc, test_sindex_remove_keeps_the_others);
    tcase_add_test(tc, test_sindex_random_against_reference);
    tcase_add_test(tc, test_sindex_in_the_store);
    suite_add_tcase(s, tc);
    return s;
}

SUITE_REGISTER(store_index_suite)
