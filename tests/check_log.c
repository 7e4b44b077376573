/* check_log.c -- log_source (server/log_source.c), the one limit on log
 * lines a client can cause (a wrong AUTH, a refused /metrics request, a
 * connection dropped): one line a second per address, whatever the port;
 * addresses are independent; LOG_SOURCE_PER_SEC lines a second from all of
 * them together; what is held back is counted; threads at once get one
 * line per address and second. Lines go to standard error (no writer
 * thread is started).
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <event2/event.h>
#include "suites.h"
#include "timeutil.h"
#include "../server/log.h"
#include "../server/log_source.h"

/* Waits for the start of the next second: what follows happens within one
 * calendar second (each test takes a few milliseconds), for the limit on
 * all sources together. A source's own limit needs no wait: its lines are
 * a full second apart wherever the second's edge falls. */
static void next_second(void)
{
    uint64_t s = time_now_ns() / TIME_NS_PER_SEC;

    while (time_now_ns() / TIME_NS_PER_SEC == s)
        usleep(1000);
}

START_TEST(test_log_source_per_address)
{
    long before = atomic_load(&log_source_suppressed);
    ck_assert_int_eq(log_source(LOG_LEVEL_WARN, "10.9.0.1:4000", "first"), 1);
    /* The same address from another port: the same source. */
    ck_assert_int_eq(log_source(LOG_LEVEL_WARN, "10.9.0.1:4001", "again"), 0);
    ck_assert_int_eq(log_source(LOG_LEVEL_WARN, "10.9.0.1:4002", "again"), 0);
    ck_assert_int_eq(log_source(LOG_LEVEL_WARN, "10.9.0.2:4000", "other"), 1);
    ck_assert_int_eq(log_source(LOG_LEVEL_WARN, "[::1]:4000", "v6"), 1);
    ck_assert_int_eq(log_source(LOG_LEVEL_WARN, "[::1]:4001", "v6"), 0);
    ck_assert_int_eq(atomic_load(&log_source_suppressed) - before, 3);
}
END_TEST

/* A line in one second and the next early in the following one are
 * under a second apart: the second is held back (a limit by calendar
 * second let both through, and a 2.5 s flood logged four lines). A full
 * second after the first, the source may log again. */
START_TEST(test_log_source_a_full_second_apart)
{
    /* The first line's time, as log_source took it, is between these. */
    uint64_t before = time_now_ns();
    ck_assert_int_eq(log_source(LOG_LEVEL_WARN, "10.9.1.1:1", "first"), 1);
    uint64_t after = time_now_ns();
    next_second();              /* under a second after the first */
    int early = log_source(LOG_LEVEL_WARN, "10.9.1.1:2", "early");
    /* The call's own time is before this: when this is under a second
     * after the first line's, so was the call. */
    uint64_t early_after = time_now_ns();
    if (early_after - before < TIME_NS_PER_SEC)
        ck_assert_int_eq(early, 0);
    else if (early)             /* a very slow machine: the line it let */
        after = early_after;    /* through is the one to be a second after */
    while (time_now_ns() - after < TIME_NS_PER_SEC)
        usleep(1000);
    ck_assert_int_eq(log_source(LOG_LEVEL_WARN, "10.9.1.1:3", "later"), 1);
}
END_TEST

START_TEST(test_log_source_all_together)
{
    char peer[32];
    int logged = 0;

    next_second();
    for (int i = 0; i < LOG_SOURCE_PER_SEC + 20; i++) {
        snprintf(peer, sizeof(peer), "10.8.%d.%d:1", i / 200, i % 200 + 1);
        logged += log_source(LOG_LEVEL_WARN, peer, "flood %d", i);
    }
    ck_assert_int_eq(logged, LOG_SOURCE_PER_SEC);
}
END_TEST

static atomic_int logged_by_threads;

static void *hammer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++)
        atomic_fetch_add(&logged_by_threads,
                         log_source(LOG_LEVEL_ERROR, "10.7.0.1:9", "thread"));
    return NULL;
}

/* libevent's own lines are one source: a flood of its warnings (as a
 * failing accept made, once) writes one line, the rest are counted;
 * debug lines are not even counted. */
START_TEST(test_log_source_libevent)
{
    long before = atomic_load(&log_source_suppressed);

    for (int i = 0; i < 100; i++)
        log_source_libevent(EVENT_LOG_WARN, "Error from accept() call");
    log_source_libevent(EVENT_LOG_DEBUG, "debug");
    ck_assert_int_eq(atomic_load(&log_source_suppressed) - before, 99);
}
END_TEST

START_TEST(test_log_source_threads)
{
    pthread_t t[4];
    long before = atomic_load(&log_source_suppressed);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, hammer, NULL), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    /* 4,000 calls take well under a second: one line, the rest counted
     * (two when they took over a second, on a very slow machine). */
    int n = atomic_load(&logged_by_threads);
    ck_assert_int_ge(n, 1);
    ck_assert_int_le(n, 2);
    ck_assert_int_eq(atomic_load(&log_source_suppressed) - before, 4000 - n);
}
END_TEST

static Suite *log_suite(void)
{
    Suite *s = suite_create("log");
    TCase *tc = tcase_create("source");

    tcase_add_test(tc, test_log_source_per_address);
    tcase_add_test(tc, test_log_source_a_full_second_apart);
    tcase_add_test(tc, test_log_source_all_together);
    tcase_add_test(tc, test_log_source_threads);
    tcase_add_test(tc, test_log_source_libevent);
    suite_add_tcase(s, tc);
    return s;
}

SUITE_REGISTER(log_suite)
