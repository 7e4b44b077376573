/* check_store_pending.c -- unit tests for server/store_pending.c: an ADD
 * that walks alone waits, indexed, to be linked into the tree with
 * others; FIND, DELETE and the duplicate check see it meanwhile; every
 * reader of the tree's order (store_foreach_locked) settles first; a
 * full list, the index turning off and the race window link at once;
 * nolock (no index) never defers. The serial policy, as check_store.c
 * (storetest.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "suites.h"
#include "../server/lockmode.h"
#include "../server/store.h"
#include "storetest.h"

static int append_name(const struct entry *e, void *arg)
{
    strcat(arg, entry_first(e));
    strcat(arg, ";");
    return 0;
}

/* Lone ADDs wait with the index holding them; the walk of the tree's
 * order links them first and sees them in order. */
START_TEST(test_pending_found_then_settled)
{
    struct entry *gone;
    char names[64] = "";

    ck_assert_int_eq(add(new_entry("c", "P", 1, "123-45-6789")), 0);
    ck_assert_int_eq(add(new_entry("a", "P", 1, "123-45-6789")), 0);
    ck_assert_int_eq(add(new_entry("b", "P", 1, "123-45-6789")), 0);
    ck_assert_uint_eq(st.npending, 3);
    ck_assert_uint_eq(st.tree.count, 0);
    ck_assert_uint_eq(store_count_locked(&st), 3);
    ck_assert_ptr_nonnull(find("a", "P"));
    ck_assert_ptr_null(store_check_locked(&st));

    struct entry *dup = new_entry("a", "P", 2, "123-45-6789");
    ck_assert_int_eq(add(dup), -EEXIST);        /* pending, still a name */
    entry_free(dup);
    ck_assert_int_eq(del("c", "P", &gone), 0);  /* off the list */
    entry_free(gone);
    ck_assert_int_eq(del("c", "P", &gone), -ENOENT);
    ck_assert_uint_eq(st.npending, 2);

    ck_assert_int_eq(store_foreach_locked(&st, append_name, names), 0);
    ck_assert_str_eq(names, "a;b;");
    ck_assert_uint_eq(st.npending, 0);
    ck_assert_uint_eq(st.tree.count, 2);
    ck_assert_ptr_null(store_check_locked(&st));
}
END_TEST

/* The list full: its ADDs are linked together, in a valid tree. */
START_TEST(test_pending_full_list_is_linked)
{
    char first[16];

    for (int i = 0; i < 3 * STORE_PENDING_MAX + 1; i++) {
        snprintf(first, sizeof(first), "f%d", (i * 7919) % 1000);
        ck_assert_int_eq(add(new_entry(first, "Q", 1, "123-45-6789")), 0);
        ck_assert_uint_lt(st.npending, STORE_PENDING_MAX);
    }
    ck_assert_uint_eq(st.npending, 1);
    ck_assert_uint_eq(st.tree.count, 3 * STORE_PENDING_MAX);
    ck_assert_ptr_null(store_check_locked(&st));
}
END_TEST

/* The index turned off (it could not grow): nobody stays pending, where
 * only the index would find them. */
START_TEST(test_pending_index_off_links_all)
{
    ck_assert_int_eq(add(new_entry("a", "R", 1, "123-45-6789")), 0);
    ck_assert_int_eq(add(new_entry("b", "R", 1, "123-45-6789")), 0);
    ck_assert_uint_eq(st.npending, 2);
    sindex_destroy(&st.index);          /* what a failed growth does */
    ck_assert_int_eq(add(new_entry("c", "R", 1, "123-45-6789")), 0);
    ck_assert_uint_eq(st.npending, 0);
    ck_assert_uint_eq(st.tree.count, 3);
    ck_assert_ptr_nonnull(find("a", "R"));
    ck_assert_ptr_null(store_check_locked(&st));
}
END_TEST

static void count_pause(void *arg)
{
    ++*(int *)arg;
}

/* The race lab's window sits between a walk and its link: an ADD with it
 * set links at once, through the window. */
START_TEST(test_pending_not_with_race_window)
{
    int pauses = 0;

    st.pause = count_pause;
    st.pause_arg = &pauses;
    ck_assert_int_eq(add(new_entry("a", "S", 1, "123-45-6789")), 0);
    ck_assert_int_eq(add(new_entry("b", "S", 1, "123-45-6789")), 0);
    ck_assert_uint_eq(st.npending, 0);
    ck_assert_int_eq(pauses, 2);
    st.pause = NULL;
}
END_TEST

/* nolock keeps no index, where nothing could find a pending ADD: nobody
 * is left pending after an ADD (store_pending_push refuses it, and were
 * it not to, add_locked's rule for the index off links it at once). */
START_TEST(test_pending_never_in_nolock)
{
    store_destroy(&st);
    ck_assert_int_eq(store_init(&st, &lock_policies[LOCK_MODE_NOLOCK]), 0);
    ck_assert_int_eq(add(new_entry("a", "T", 1, "123-45-6789")), 0);
    ck_assert_int_eq(add(new_entry("b", "T", 1, "123-45-6789")), 0);
    ck_assert_uint_eq(st.npending, 0);
    ck_assert_uint_eq(st.tree.count, 2);
}
END_TEST

static Suite *store_pending_suite(void)
{
    Suite *s = suite_create("store_pending");
    TCase *tc = tcase_create("pending");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_pending_found_then_settled);
    tcase_add_test(tc, test_pending_full_list_is_linked);
    tcase_add_test(tc, test_pending_index_off_links_all);
    tcase_add_test(tc, test_pending_not_with_race_window);
    tcase_add_test(tc, test_pending_never_in_nolock);
    suite_add_tcase(s, tc);
    return s;
}
SUITE_REGISTER(store_pending_suite)
