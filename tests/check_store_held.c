/* check_store_held.c -- the held() assertion of every _locked function of
 * server/store.c: without the store lock a call aborts in each mode that
 * has a mutex (coarse, fine, buffered), with it the call passes; serial and
 * nolock have no lock, say so, and never abort. Each test makes its own
 * store under the policy it checks. */
#include <signal.h>
#include <stdio.h>
#include "suites.h"
#include "../server/store.h"
#include "../server/lockmode.h"

static struct store locked_st;

START_TEST(test_store_locked_call_without_lock_aborts)
{
    ck_assert_int_eq(store_init(&locked_st, &lock_policies[_i]), 0);
    if (!freopen("/dev/null", "w", stderr))     /* the expected message */
        return;
    store_count_locked(&locked_st);             /* not held: assert fires */
}
END_TEST

START_TEST(test_store_locked_call_with_lock_passes)
{
    ck_assert_int_eq(store_init(&locked_st, &lock_policies[_i]), 0);
    ck_assert_int_eq(store_lock_owned(&locked_st), 0);
    ck_assert_int_eq(store_lock(&locked_st), 0);
    ck_assert_int_eq(store_lock_owned(&locked_st), 1);
    ck_assert_uint_eq(store_count_locked(&locked_st), 0);
    ck_assert_int_eq(store_unlock(&locked_st), 0);
    ck_assert_int_eq(store_lock_owned(&locked_st), 0);
    store_destroy(&locked_st);
}
END_TEST

/* serial and nolock have no lock: held() says so, and nothing aborts. */
START_TEST(test_store_lockless_modes_say_no_lock)
{
    static const enum lock_mode modes[] = { LOCK_MODE_SERIAL,
                                            LOCK_MODE_NOLOCK };

    for (size_t i = 0; i < 2; i++) {
        const struct lock_policy *p = &lock_policies[modes[i]];
        ck_assert_int_eq(store_init(&locked_st, p), 0);
        ck_assert_int_eq(p->held(&locked_st), LOCK_NONE);
        ck_assert_uint_eq(store_count_locked(&locked_st), 0);
        store_destroy(&locked_st);
    }
    const struct lock_policy *fine = &lock_policies[LOCK_MODE_FINE];
    ck_assert_int_eq(store_init(&locked_st, fine), 0);
    ck_assert_int_eq(fine->held(&locked_st), LOCK_NOT_HELD);
    ck_assert_int_eq(store_lock(&locked_st), 0);
    ck_assert_int_eq(fine->held(&locked_st), LOCK_HELD);
    ck_assert_int_eq(store_unlock(&locked_st), 0);
    store_destroy(&locked_st);
}
END_TEST

static Suite *store_held_suite(void)
{
    Suite *s = suite_create("store_held");
    TCase *held = tcase_create("held");

    /* coarse, fine and buffered each have a mutex to hold. */
    tcase_add_loop_test_raise_signal(held,
        test_store_locked_call_without_lock_aborts, SIGABRT,
        LOCK_MODE_COARSE, LOCK_MODE_BUFFERED + 1);
    tcase_add_loop_test(held, test_store_locked_call_with_lock_passes,
                        LOCK_MODE_COARSE, LOCK_MODE_BUFFERED + 1);
    tcase_add_test(held, test_store_lockless_modes_say_no_lock);

    suite_add_tcase(s, held);
    return s;
}

SUITE_REGISTER(store_held_suite)
