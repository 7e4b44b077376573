/* check_journal_replay.c -- how the journal's replay links the people it
 * reads (server/journal/journal_replay.c): a file in tree order (what
 * COMPACT writes) is linked with no walk down the tree, each ADD right of
 * the last node (store_slot_hint.after_last); a file in any other order
 * walks each ADD at once, and both give the same valid store.
 *
 * The walks are counted by wrapping rb_find_slot at link time
 * (-Wl,--wrap=rb_find_slot, the unit runner's link only, tests/tests.mk):
 * the installed servers carry no counter.
 */
#include <stdio.h>
#include "suites.h"
#include "../server/journal/journal.h"
#include "../server/lockmode.h"
#include "../server/store.h"
#include "journaltest.h"

#define PEOPLE 1000

static unsigned long walks;

struct rb_node *__real_rb_find_slot(struct rb_tree *t, const void *key,
                                    rb_key_cmp_fn cmp,
                                    struct rb_node **parent,
                                    struct rb_node ***link);

struct rb_node *__wrap_rb_find_slot(struct rb_tree *t, const void *key,
                                    rb_key_cmp_fn cmp,
                                    struct rb_node **parent,
                                    struct rb_node ***link)
{
    walks++;
    return __real_rb_find_slot(t, key, cmp, parent, link);
}

/* A journal of PEOPLE ADDs, ascending by name or descending, closed;
 * then replayed into a fresh store: the walks the replay made. */
static unsigned long replay_walks(int ascending)
{
    const struct lock_policy *p = &lock_policies[LOCK_MODE_BUFFERED];
    struct store st;
    char err[512], first[16];

    unlink(path);
    ck_assert_int_eq(store_init(&st, p), 0);
    struct journal *j = journal_open(path, JOURNAL_FSYNC_NO, 0, &st, err,
                                     sizeof(err));
    ck_assert_msg(j != NULL, "%s", err);
    for (int i = 0; i < PEOPLE; i++) {
        snprintf(first, sizeof(first), "P%04d", ascending ? i : PEOPLE - i);
        ck_assert_int_eq(apply(&st, STORE_ADD, first, "Smith"), 0);
    }
    journal_close(j);
    store_destroy(&st);

    ck_assert_int_eq(store_init(&st, p), 0);
    walks = 0;
    j = journal_open(path, JOURNAL_FSYNC_NO, 0, &st, err, sizeof(err));
    unsigned long n = walks;
    ck_assert_msg(j != NULL, "%s", err);
    ck_assert_uint_eq(count(&st), PEOPLE);
    store_lock(&st);
    ck_assert_ptr_null(store_check_locked(&st));
    store_unlock(&st);
    journal_close(j);
    store_destroy(&st);
    return n;
}

/* In order: no ADD walks (the first is the root). Fails when the replay
 * stops asking for the shortcut (every ADD walks then). */
START_TEST(test_replay_in_order_walks_none)
{
    ck_assert_uint_eq(replay_walks(1), 0);
}
END_TEST

/* Descending: the shortcut's comparison fails and each ADD walks, at
 * once (a replay never waits to link, store_pending.c); the count above
 * is not zero for want of counting. */
START_TEST(test_replay_out_of_order_walks)
{
    ck_assert_uint_ge(replay_walks(0), PEOPLE - 1);
}
END_TEST

static Suite *journal_replay_suite(void)
{
    Suite *s = suite_create("journal_replay");
    TCase *tc = tcase_create("order");

    tcase_add_checked_fixture(tc, file_setup, file_teardown);
    tcase_add_test(tc, test_replay_in_order_walks_none);
    tcase_add_test(tc, test_replay_out_of_order_walks);
    suite_add_tcase(s, tc);
    return s;
}
SUITE_REGISTER(journal_replay_suite)
