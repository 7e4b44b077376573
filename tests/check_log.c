/* check_log.c -- log_ratelimited (server/log.c): the first line of a
 * source is logged, the ones within its interval only counted, and the
 * next line after it says how many; a filtered level counts nothing;
 * sources are independent; threads at once log one line per interval.
 * Lines go to standard error (no writer thread is started). */
#include <pthread.h>
#include <unistd.h>
#include "suites.h"
#include "../server/log.h"

START_TEST(test_log_ratelimited_interval)
{
    static struct log_ratelimit rl = LOG_RATELIMIT_INIT(200);
    static struct log_ratelimit other = LOG_RATELIMIT_INIT(200);

    ck_assert_int_eq(log_ratelimited(&rl, LOG_LEVEL_WARN, "first %d", 1), 1);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(log_ratelimited(&rl, LOG_LEVEL_WARN, "again"), 0);
    ck_assert_uint_eq(atomic_load(&rl.suppressed), 5);
    ck_assert_int_eq(log_ratelimited(&other, LOG_LEVEL_WARN, "other"), 1);
    ck_assert_int_eq(log_ratelimited(&rl, LOG_LEVEL_DEBUG, "filtered"), 0);
    ck_assert_uint_eq(atomic_load(&rl.suppressed), 5);  /* not counted */
    usleep(250 * 1000);
    ck_assert_int_eq(log_ratelimited(&rl, LOG_LEVEL_WARN, "later"), 1);
    ck_assert_uint_eq(atomic_load(&rl.suppressed), 0);
}
END_TEST

static struct log_ratelimit shared = LOG_RATELIMIT_INIT(60000);
static atomic_int logged;

static void *hammer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++)
        atomic_fetch_add(&logged, log_ratelimited(&shared, LOG_LEVEL_ERROR,
                                                  "thread line"));
    return NULL;
}

START_TEST(test_log_ratelimited_threads)
{
    pthread_t t[4];

    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, hammer, NULL), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    ck_assert_int_eq(atomic_load(&logged), 1);
    ck_assert_uint_eq(atomic_load(&shared.suppressed), 3999);
}
END_TEST

static Suite *log_suite(void)
{
    Suite *s = suite_create("log");
    TCase *tc = tcase_create("ratelimited");

    tcase_add_test(tc, test_log_ratelimited_interval);
    tcase_add_test(tc, test_log_ratelimited_threads);
    suite_add_tcase(s, tc);
    return s;
}

SUITE_REGISTER(log_suite)
