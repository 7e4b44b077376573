/* check_rbtree_random.c -- the long runs of common/rbtree.c's unit tests
 * (the small known cases are in check_rbtree.c).
 *
 *   random:  long operation sequences from a fixed seed against a plain
 *            array, with rb_check() after every step; sorted inserts and
 *            erases, the worst cases for rebalancing.
 * Inserts go through insert_node() and the PRNG is rng_next() (rbtest.h).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include "rbtree.h"
#include "suites.h"
#include "rbtest.h"

/* The tree against the reference: same count, every key found exactly when
 * present (and as its own node), traversal equal to the present keys. */
static void assert_matches(const struct rb_tree *t, const struct item *pool,
                           const bool *present, int nkeys, size_t npresent)
{
    const struct rb_node *p = rb_first(t);

    ck_assert_uint_eq(t->count, npresent);
    for (int k = 0; k < nkeys; k++) {
        ck_assert_ptr_eq(find_key(t, k), present[k] ? &pool[k].node : NULL);
        if (!present[k])
            continue;
        ck_assert_ptr_nonnull(p);
        ck_assert_int_eq(key_of(p), k);
        p = rb_next(p);
    }
    ck_assert_ptr_null(p);
}

static void random_run(uint64_t seed, int nops, int nkeys)
{
    struct item *pool = calloc((size_t)nkeys, sizeof *pool);
    bool *present = calloc((size_t)nkeys, sizeof *present);
    size_t npresent = 0;
    struct rb_tree t;

    ck_assert_ptr_nonnull(pool);
    ck_assert_ptr_nonnull(present);
    rb_init(&t);
    for (int k = 0; k < nkeys; k++)
        pool[k].key = k;

    for (int op = 0; op < nops; op++) {
        uint64_t r = rng_next(&seed);
        int k = (int)(r % (uint64_t)nkeys);

        if (r >> 63) {
            struct item dup = { .key = k };
            struct rb_node *got = insert_node(&t, present[k] ? &dup.node
                                                             : &pool[k].node);
            ck_assert_ptr_eq(got, present[k] ? &pool[k].node : NULL);
            if (!present[k]) {
                present[k] = true;
                npresent++;
            }
        } else {
            struct rb_node *got = find_key(&t, k);

            ck_assert_ptr_eq(got, present[k] ? &pool[k].node : NULL);
            if (got) {
                rb_erase(&t, got);
                present[k] = false;
                npresent--;
            }
        }
        assert_valid(&t);
        ck_assert_uint_eq(t.count, npresent);
        if (op % 1000 == 999)
            assert_matches(&t, pool, present, nkeys, npresent);
    }
    assert_matches(&t, pool, present, nkeys, npresent);
    assert_balanced(&t);
    free(pool);
    free(present);
}

START_TEST(test_rb_random_ops_match_reference)
{
    random_run(0x9e3779b97f4a7c15ULL, 20000, 2000);
}
END_TEST

/* A small key space keeps emptying and refilling the tree. */
START_TEST(test_rb_random_ops_small_keyspace)
{
    random_run(42, 20000, 24);
}
END_TEST

enum { SORTED_N = 3000 };

/* Inserts 0..SORTED_N-1 in the given direction, then erases in the given
 * direction, checking the tree after every step. */
static void sorted_run(bool insert_up, bool erase_up)
{
    static struct item items[SORTED_N];
    struct rb_tree t;

    rb_init(&t);
    for (int i = 0; i < SORTED_N; i++) {
        int k = insert_up ? i : SORTED_N - 1 - i;

        items[k].key = k;
        ck_assert_ptr_null(insert_node(&t, &items[k].node));
        assert_valid(&t);
    }
    assert_balanced(&t);
    ck_assert_int_eq(key_of(rb_first(&t)), 0);
    for (int i = 0; i < SORTED_N; i++) {
        int k = erase_up ? i : SORTED_N - 1 - i;

        rb_erase(&t, &items[k].node);
        assert_valid(&t);
        ck_assert_ptr_null(find_key(&t, k));
        if (i % 256 == 0)
            assert_balanced(&t);
    }
    ck_assert_ptr_null(t.root);
}

START_TEST(test_rb_ascending_insert_descending_erase)
{
    sorted_run(true, false);
}
END_TEST

START_TEST(test_rb_descending_insert_ascending_erase)
{
    sorted_run(false, true);
}
END_TEST

static Suite *rbtree_random_suite(void)
{
    Suite *s = suite_create("rbtree_random");
    TCase *tc;

    tc = tcase_create("random");
    tcase_add_test(tc, test_rb_random_ops_match_reference);
    tcase_add_test(tc, test_rb_random_ops_small_keyspace);
    tcase_add_test(tc, test_rb_ascending_insert_descending_erase);
    tcase_add_test(tc, test_rb_descending_insert_ascending_erase);
    suite_add_tcase(s, tc);

    return s;
}

SUITE_REGISTER(rbtree_random_suite)
