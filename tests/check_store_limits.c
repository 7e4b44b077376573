/* check_store_limits.c -- server/store.c at its limits: the longest names,
 * random adds and deletes from a fixed seed against a simple reference with
 * the checker after every step, and sorted inserts that must stay
 * balanced. The store uses the serial policy (the fixture and helpers are
 * in storetest.h, shared with check_store.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "../server/store.h"
#include "storetest.h"

START_TEST(test_store_longest_names)
{
    char first[ENTRY_NAME_MAX + 1], last[ENTRY_NAME_MAX + 1];

    memset(first, 'f', ENTRY_NAME_MAX);
    first[ENTRY_NAME_MAX] = '\0';
    memset(last, 'l', ENTRY_NAME_MAX);
    last[ENTRY_NAME_MAX] = '\0';
    ck_assert_int_eq(add(new_entry(first, last, 150, "123-45-6789")), 0);
    last[ENTRY_NAME_MAX - 1] = 'm';             /* differs in the last byte */
    ck_assert_int_eq(add(new_entry(first, last, 0, "123-45-6789")), 0);
    ck_assert_uint_eq(store_count_locked(&st), 2);
    ck_assert_int_eq(entry_age(find(first, last)), 0);
}
END_TEST

/* Random adds and deletes from a fixed seed, checked against a table of
 * which of N names are present, with every invariant checked each step. */
START_TEST(test_store_random_against_reference)
{
    enum { N = 300, STEPS = 6000 };
    static int present[N];
    static int ages[N];
    size_t count = 0;
    char first[16], last[16];
    unsigned seed = 12345;

    for (int step = 0; step < STEPS; step++) {
        int i = (int)(rand_r(&seed) % N);
        snprintf(first, sizeof(first), "f%d", i % 17);
        snprintf(last, sizeof(last), "L%d", i);
        if (rand_r(&seed) % 3) {                /* add twice as often */
            struct entry *e = new_entry(first, last, step % 151,
                                        "123-45-6789");
            int rc = add(e);
            if (present[i]) {
                ck_assert_int_eq(rc, -EEXIST);
                entry_free(e);
            } else {
                ck_assert_int_eq(rc, 0);
                present[i] = 1;
                ages[i] = step % 151;
                count++;
            }
        } else {
            struct entry *removed = NULL;
            int rc = del(first, last, &removed);
            if (present[i]) {
                ck_assert_int_eq(rc, 0);
                ck_assert_ptr_nonnull(removed);
                ck_assert_str_eq(entry_last(removed), last);
                ck_assert_int_eq(entry_age(removed), ages[i]);
                entry_free(removed);
                present[i] = 0;
                count--;
            } else {
                ck_assert_int_eq(rc, -ENOENT);
            }
        }
        ck_assert_uint_eq(store_count_locked(&st), count);
        const char *broken = store_check_locked(&st);
        ck_assert_msg(broken == NULL, "step %d: %s", step, broken);
    }
    for (int i = 0; i < N; i++) {
        snprintf(first, sizeof(first), "f%d", i % 17);
        snprintf(last, sizeof(last), "L%d", i);
        const struct entry *e = find(first, last);
        ck_assert_int_eq(e != NULL, present[i]);
        if (e)
            ck_assert_int_eq(entry_age(e), ages[i]);
    }
}
END_TEST

/* Ascending inserts then deleting every other one: the worst shape for an
 * unbalanced tree, still within the checker's depth bound here. */
START_TEST(test_store_sorted_inserts_stay_balanced)
{
    enum { N = 5000 };
    char last[16];
    struct entry *removed;

    for (int i = 0; i < N; i++) {
        snprintf(last, sizeof(last), "L%06d", i);
        ck_assert_int_eq(add(new_entry("x", last, 1, "123-45-6789")), 0);
    }
    ck_assert_ptr_null(store_check_locked(&st));
    for (int i = 0; i < N; i += 2) {
        snprintf(last, sizeof(last), "L%06d", i);
        ck_assert_int_eq(del("x", last, &removed), 0);
        entry_free(removed);
    }
    ck_assert_uint_eq(store_count_locked(&st), N / 2);
    ck_assert_ptr_null(store_check_locked(&st));
}
END_TEST

static Suite *store_limits_suite(void)
{
    Suite *s = suite_create("store_limits");
    TCase *limits = tcase_create("limits");

    tcase_add_checked_fixture(limits, setup, teardown);

    tcase_add_test(limits, test_store_longest_names);
    tcase_add_test(limits, test_store_random_against_reference);
    tcase_add_test(limits, test_store_sorted_inserts_stay_balanced);

    suite_add_tcase(s, limits);
    return s;
}

SUITE_REGISTER(store_limits_suite)
