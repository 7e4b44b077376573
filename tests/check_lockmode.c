/* check_lockmode.c -- unit tests for the lock policy table
 * (server/lockmode.c), each mode's behaviour observed from outside: serial
 * pauses admission while a session runs, coarse holds the store lock for a
 * session's life (a second session waits), fine and buffered take it around
 * each operation, fine's PRINT reaches the client with the lock held and
 * buffered's only after it is released, serial and nolock never take it,
 * and only nolock's store goes without a hash index.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <unistd.h>
#include "suites.h"
#include "sessiontest.h"
#include "timeutil.h"
#include "../server/listing.h"

/* ---- the table itself --------------------------------------------------- */

START_TEST(test_lockmode_rows_complete)
{
    const struct lock_policy *p = &lock_policies[_i];

    ck_assert_ptr_nonnull(p->name);
    ck_assert_ptr_nonnull(p->summary);
    ck_assert_int_eq(p->number, _i + 1);        /* ssnserver1..5 */
    ck_assert_ptr_nonnull(p->admit);
    ck_assert_ptr_nonnull(p->dismiss);
    ck_assert_ptr_nonnull(p->session_begin);
    ck_assert_ptr_nonnull(p->session_end);
    ck_assert_ptr_nonnull(p->op_enter);
    ck_assert_ptr_nonnull(p->op_leave);
    ck_assert_ptr_nonnull(p->print);
    ck_assert_ptr_nonnull(p->held);
    for (int j = 0; j < _i; j++)
        ck_assert_str_ne(p->name, lock_policies[j].name);
}
END_TEST

/* Only serial pauses admission; every mode resumes it when a session ends. */
START_TEST(test_lockmode_admission)
{
    const struct lock_policy *p = &lock_policies[_i];
    struct store st;

    ck_assert_int_eq(store_init(&st, p), 0);
    ck_assert_int_eq(p->admit(&st), _i == LOCK_MODE_SERIAL ? LOCK_ADMIT_PAUSE
                                                           : LOCK_ADMIT_MORE);
    ck_assert_int_eq(p->dismiss(&st), LOCK_ADMIT_MORE);
    store_destroy(&st);
}
END_TEST

/* Every mode but nolock keeps a hash index beside the tree; nolock keeps
 * only the tree, so that its races stay the tree's. */
START_TEST(test_lockmode_hash_index)
{
    const struct lock_policy *p = &lock_policies[_i];
    struct store st;

    ck_assert_int_eq(p->hash_index, _i != LOCK_MODE_NOLOCK);
    ck_assert_int_eq(store_init(&st, p), 0);
    ck_assert_int_eq(sindex_on(&st.index), p->hash_index);
    store_destroy(&st);
}
END_TEST

/* Who holds the mutex after session_begin and after op_enter. */
START_TEST(test_lockmode_what_each_hook_holds)
{
    const struct lock_policy *p = &lock_policies[_i];
    int session_lock = _i == LOCK_MODE_COARSE;
    int op_lock = _i == LOCK_MODE_FINE || _i == LOCK_MODE_BUFFERED;
    struct store st;

    ck_assert_int_eq(store_init(&st, p), 0);
    ck_assert_int_eq(p->session_begin(&st), 0);
    ck_assert_int_eq(store_lock_owned(&st), session_lock);
    ck_assert_int_eq(p->op_enter(&st, STORE_WRITE), 0);
    ck_assert_int_eq(store_lock_owned(&st), session_lock || op_lock);
    ck_assert_int_ne(p->held(&st), LOCK_NOT_HELD);
    ck_assert_int_eq(p->op_leave(&st, STORE_WRITE), 0);
    ck_assert_int_eq(store_lock_owned(&st), session_lock);
    ck_assert_int_eq(p->session_end(&st), 0);
    ck_assert_int_eq(store_lock_owned(&st), 0);
    store_destroy(&st);
}
END_TEST

/* ---- coarse: one session at a time --------------------------------------- */

static atomic_int second_begun;

static void *second_session(void *arg)
{
    struct store *st = arg;

    ck_assert_int_eq(st->policy->session_begin(st), 0);
    atomic_store(&second_begun, 1);
    st->policy->session_end(st);
    return NULL;
}

START_TEST(test_lockmode_coarse_second_session_waits)
{
    pthread_t t;

    session_start_mode(LOCK_MODE_COARSE, 0);
    ck_assert_str_eq(talk("ADD a b 1 123-45-6789\n"), "OK\n");
    atomic_store(&second_begun, 0);
    ck_assert_int_eq(pthread_create(&t, NULL, second_session, &test_store), 0);
    time_sleep_ns(200 * TIME_NS_PER_MS);
    ck_assert_int_eq(atomic_load(&second_begun), 0);    /* still waiting */
    ck_assert_str_eq(talk("COUNT\n"), "1\n");   /* the first goes on */
    session_end(sess);
    pthread_join(t, NULL);
    ck_assert_int_eq(atomic_load(&second_begun), 1);
    session_free(sess);
    store_destroy(&test_store);
}
END_TEST

/* The other modes let a second session begin while the first runs. */
START_TEST(test_lockmode_others_second_session_begins)
{
    pthread_t t;

    if (_i == LOCK_MODE_COARSE)
        return;
    session_start_mode((enum lock_mode)_i, 0);
    atomic_store(&second_begun, 0);
    ck_assert_int_eq(pthread_create(&t, NULL, second_session, &test_store), 0);
    pthread_join(t, NULL);                      /* would hang if it waited */
    ck_assert_int_eq(atomic_load(&second_begun), 1);
    session_stop();
}
END_TEST

/* ---- how PRINT reaches the client --------------------------------------- */

/* Enough people that PRINT takes several sends when streamed. */
static void fill(int n)
{
    char line[64];

    for (int i = 0; i < n; i++) {
        snprintf(line, sizeof(line), "ADD p%04d Smith 1 123-45-6789\n", i);
        ck_assert_str_eq(talk(line), "OK\n");
    }
}

START_TEST(test_lockmode_fine_prints_under_the_lock)
{
    session_start_mode(LOCK_MODE_FINE, 0);
    fill(500);                                  /* about 26 KB */
    capture_reset();
    session_input(sess, "PRINT\n", 6);
    /* Sent during the walk, before session_input returned, lock held. */
    ck_assert_int_gt(cap.sends, 1);
    ck_assert_int_eq(cap.sends_locked, cap.sends);
    ck_assert_uint_gt(cap.len, 500 * 51);
    ck_assert_int_eq(store_lock_owned(&test_store), 0);
    session_stop();
}
END_TEST

START_TEST(test_lockmode_buffered_prints_after_unlocking)
{
    session_start_mode(LOCK_MODE_BUFFERED, 0);
    fill(500);
    ck_assert_str_eq(talk("COUNT\n"), "500\n");
    capture_reset();
    session_input(sess, "COUNT\nPRINT\n", 12);
    /* The COUNT before it, then the whole listing in one send, both after
     * the lock was released. */
    ck_assert_int_eq(cap.sends, 2);
    ck_assert_int_eq(cap.sends_locked, 0);
    ck_assert_uint_gt(cap.len, 500 * 51);
    ck_assert_int_eq(memcmp(cap.buf, "500\n" ENTRY_PRINT_HEAD, 55), 0);
    session_stop();
}
END_TEST

/* An unchanged store's listing is formatted once and shared; a change
 * makes the next PRINT format a new one. */
START_TEST(test_lockmode_buffered_listing_shared_until_change)
{
    session_start_mode(LOCK_MODE_BUFFERED, 0);
    fill(50);
    talk("PRINT\n");
    struct listing *first = test_store.listing;
    ck_assert_ptr_nonnull(first);
    ck_assert_int_eq(atomic_load(&first->refs), 1);     /* the cache's */
    talk("PRINT\n");
    ck_assert_ptr_eq(test_store.listing, first);
    talk("DELETE p0000 Smith\nPRINT\n");
    ck_assert_ptr_ne(test_store.listing, first);
    ck_assert_ptr_null(strstr(cap.buf, "p0000"));
    session_stop();
}
END_TEST

/* serial and nolock stream too, but there is no lock to hold; coarse
 * streams inside the session's lock. */
START_TEST(test_lockmode_streaming_modes_print)
{
    static const enum lock_mode modes[] = { LOCK_MODE_SERIAL,
        LOCK_MODE_NOLOCK, LOCK_MODE_COARSE };
    enum lock_mode m = modes[_i];

    session_start_mode(m, 0);
    fill(500);
    capture_reset();
    session_input(sess, "PRINT\n", 6);
    ck_assert_int_gt(cap.sends, 1);
    ck_assert_int_eq(cap.sends_locked, m == LOCK_MODE_COARSE ? cap.sends : 0);
    session_stop();
}
END_TEST

/* Every mode's listing is the same bytes. */
START_TEST(test_lockmode_print_same_in_every_mode)
{
    static char first[64 * 1024];
    size_t first_len;

    session_start_mode(LOCK_MODE_SERIAL, 0);
    fill(300);
    ck_assert_uint_lt(strlen(talk("PRINT\n")), sizeof(first));
    first_len = cap.len;
    memcpy(first, cap.buf, cap.len + 1);
    session_stop();
    for (int m = 1; m < LOCK_MODES; m++) {
        session_start_mode((enum lock_mode)m, 0);
        fill(300);
        ck_assert_str_eq(talk("PRINT\n"), first);
        ck_assert_uint_eq(cap.len, first_len);
        session_stop();
    }
}
END_TEST

/* ---- the lock measured from inside ------------------------------------- */

static uint64_t stat_of(const char *stats, const char *name)
{
    char key[64];
    const char *p;

    snprintf(key, sizeof(key), "\n%s ", name);
    p = strstr(stats, key);
    ck_assert_msg(p != NULL, "no %s in STATS", name);
    return strtoull(p + strlen(key), NULL, 10);
}

/* Every store operation of fine and buffered is one acquisition; serial
 * and nolock never take the lock; coarse takes it once per session. */
START_TEST(test_lockmode_lock_figures_per_mode)
{
    session_start_mode((enum lock_mode)_i, 0);
    talk("STATS RESET\n");
    talk("ADD a b 1 123-45-6789\nFIND a b\nCOUNT\nDELETE a b\n");
    const char *st = talk("STATS\n");
    uint64_t want = _i == LOCK_MODE_FINE || _i == LOCK_MODE_BUFFERED ? 5
                  : 0;                  /* 4 requests and STATS itself */
    ck_assert_uint_eq(stat_of(st, "lock_acquisitions"), want);
    ck_assert_uint_eq(stat_of(st, "lock_contended"), 0);
    ck_assert_uint_eq(stat_of(st, "lock_wait_us"), 0);
    if (_i == LOCK_MODE_COARSE) {
        /* The session's one acquisition happened before the reset. */
        session_end(sess);
        ck_assert_uint_eq(test_store.stats.acquisitions, 0);
        ck_assert_uint_eq(test_store.stats.hold.count, 1);
        session_free(sess);
        store_destroy(&test_store);
        return;
    }
    session_stop();
}
END_TEST

static atomic_int holder_ready;

/* Holds the store lock for 50 ms while the main thread asks for it. */
static void *hold_lock(void *arg)
{
    struct store *st = arg;

    ck_assert_int_eq(store_lock(st), 0);
    atomic_store(&holder_ready, 1);
    time_sleep_ns(50 * TIME_NS_PER_MS);
    ck_assert_int_eq(store_unlock(st), 0);
    return NULL;
}

START_TEST(test_lockmode_contention_is_measured)
{
    pthread_t t;

    session_start_mode(LOCK_MODE_FINE, 0);
    atomic_store(&holder_ready, 0);
    ck_assert_int_eq(pthread_create(&t, NULL, hold_lock, &test_store), 0);
    while (!atomic_load(&holder_ready))
        time_sleep_ns(TIME_NS_PER_MS);
    const char *st = talk("STATS\n");      /* waits for the holder */
    pthread_join(t, NULL);
    ck_assert_uint_eq(stat_of(st, "lock_acquisitions"), 2);
    ck_assert_uint_eq(stat_of(st, "lock_contended"), 1);
    ck_assert_uint_ge(stat_of(st, "lock_wait_us"), 10000);
    ck_assert_uint_ge(stat_of(st, "lock_hold_max_us"), 40000);
    ck_assert_uint_ge(stat_of(st, "lock_wait_max_us"),
                      stat_of(st, "lock_wait_p99_us") / 2);
    st = talk("STATS RESET\nSTATS\n");
    ck_assert_int_eq(strncmp(st, "OK\n", 3), 0);
    ck_assert_uint_eq(stat_of(st, "lock_contended"), 0);
    ck_assert_uint_lt(stat_of(st, "lock_hold_max_us"), 40000); /* gone */
    ck_assert_uint_eq(stat_of(st, "lock_acquisitions"), 1);  /* STATS */
    ck_assert_uint_eq(stat_of(st, "commands_total"), 0);
    session_stop();
}
END_TEST

static Suite *lockmode_suite(void)
{
    Suite *s = suite_create("lockmode");
    TCase *table = tcase_create("table");
    TCase *sessions = tcase_create("sessions");
    TCase *print = tcase_create("print");

    tcase_add_loop_test(table, test_lockmode_rows_complete, 0, LOCK_MODES);
    tcase_add_loop_test(table, test_lockmode_admission, 0, LOCK_MODES);
    tcase_add_loop_test(table, test_lockmode_hash_index, 0, LOCK_MODES);
    tcase_add_loop_test(table, test_lockmode_what_each_hook_holds, 0,
                        LOCK_MODES);

    tcase_add_test(sessions, test_lockmode_coarse_second_session_waits);
    tcase_add_loop_test(sessions, test_lockmode_others_second_session_begins,
                        0, LOCK_MODES);

    tcase_add_test(print, test_lockmode_fine_prints_under_the_lock);
    tcase_add_test(print, test_lockmode_buffered_prints_after_unlocking);
    tcase_add_test(print, test_lockmode_buffered_listing_shared_until_change);
    tcase_add_loop_test(print, test_lockmode_streaming_modes_print, 0, 3);
    tcase_add_test(print, test_lockmode_print_same_in_every_mode);

    TCase *figures = tcase_create("figures");
    tcase_add_loop_test(figures, test_lockmode_lock_figures_per_mode, 0,
                        LOCK_MODES);
    tcase_add_test(figures, test_lockmode_contention_is_measured);
    suite_add_tcase(s, figures);

    suite_add_tcase(s, table);
    suite_add_tcase(s, sessions);
    suite_add_tcase(s, print);
    return s;
}

SUITE_REGISTER(lockmode_suite)
