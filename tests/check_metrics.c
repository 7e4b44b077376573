/* check_metrics.c -- the request-latency sets and the journal's rounds
 * (server/metrics.c): sets taken by several threads merge into one
 * figure per command; a set given back is found again; STATS RESET clears
 * every set, the ones held at the time included; the round histograms.
 * Each test runs in its own process (the module's state is global). */
#include <pthread.h>
#include "suites.h"
#include "../server/metrics.h"

static struct metrics_snapshot snap(void)
{
    struct metrics_snapshot s;

    ck_assert_int_eq(metrics_snapshot(&s), 0);
    return s;
}

START_TEST(test_metrics_cmd_of)
{
    ck_assert_int_eq(metrics_cmd_of(PROTO_FIND), METRICS_FIND);
    ck_assert_int_eq(metrics_cmd_of(PROTO_TREE), METRICS_TREE);
    ck_assert_int_eq(metrics_cmd_of(PROTO_STATS_RESET), -1);
    ck_assert_int_eq(metrics_cmd_of(PROTO_AUTH), -1);
    ck_assert_int_eq(metrics_cmd_of(PROTO_INVALID), -1);
    ck_assert_str_eq(metrics_cmd_names[METRICS_DIGEST], "digest");
}
END_TEST

START_TEST(test_metrics_empty)
{
    struct metrics_snapshot s = snap();

    for (int i = 0; i < METRICS_CMDS; i++)
        ck_assert_uint_eq(s.cmd[i].count, 0);
    ck_assert_uint_eq(s.round_ns.count, 0);
}
END_TEST

/* 1..20 ns of FIND recorded through two sets held at once. */
START_TEST(test_metrics_sets_merge)
{
    struct metrics_set *a = metrics_take(), *b = metrics_take();

    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_ne(a, b);
    for (uint64_t v = 1; v <= 20; v++)
        metrics_record(v % 2 ? a : b, METRICS_FIND, v);
    metrics_record(a, METRICS_ADD, 7);
    struct metrics_snapshot s = snap();         /* while held */
    ck_assert_uint_eq(s.cmd[METRICS_FIND].count, 20);
    ck_assert_uint_eq(s.cmd[METRICS_FIND].p50, 10);
    ck_assert_uint_eq(s.cmd[METRICS_FIND].p90, 18);
    ck_assert_uint_eq(s.cmd[METRICS_FIND].max, 20);
    ck_assert_uint_eq(s.cmd[METRICS_ADD].count, 1);
    metrics_give(a);
    metrics_give(b);
    ck_assert_ptr_eq(metrics_take(), a);        /* this thread's slot */
    s = snap();
    ck_assert_uint_eq(s.cmd[METRICS_FIND].count, 20);
}
END_TEST

/* Many threads taking and giving back: every record counted, and no
 * more sets made than were held at once. */
#define THREADS 8
#define SLICES 2000

static void *slices(void *arg)
{
    (void)arg;
    for (int i = 0; i < SLICES; i++) {
        struct metrics_set *m = metrics_take();
        ck_assert_ptr_nonnull(m);
        metrics_record(m, METRICS_COUNT, 1000 + (uint64_t)i);
        metrics_record(m, METRICS_COUNT, 1000 + (uint64_t)i);
        metrics_give(m);
    }
    return NULL;
}

START_TEST(test_metrics_threads)
{
    pthread_t t[THREADS];

    for (int i = 0; i < THREADS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, slices, NULL), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    struct metrics_snapshot s = snap();
    ck_assert_uint_eq(s.cmd[METRICS_COUNT].count, 2 * THREADS * SLICES);
    ck_assert_uint_eq(s.cmd[METRICS_COUNT].max, 1000 + SLICES - 1);
}
END_TEST

START_TEST(test_metrics_reset)
{
    struct metrics_set *held = metrics_take(), *idle = metrics_take();

    metrics_record(held, METRICS_PRINT, 500);
    metrics_record(idle, METRICS_PRINT, 900);
    metrics_give(idle);
    metrics_journal_round(3, 1000, 41000);
    metrics_reset();
    struct metrics_snapshot s = snap();
    ck_assert_uint_eq(s.cmd[METRICS_PRINT].count, 0);   /* both skipped */
    ck_assert_uint_eq(s.round_records.count, 0);
    metrics_record(held, METRICS_PRINT, 30);    /* cleared, then counted */
    s = snap();
    ck_assert_uint_eq(s.cmd[METRICS_PRINT].count, 1);
    ck_assert_uint_eq(s.cmd[METRICS_PRINT].max, 30);
    metrics_give(held);
}
END_TEST

START_TEST(test_metrics_journal_rounds)
{
    for (uint64_t r = 1; r <= 10; r++)
        metrics_journal_round(r, 5000, 5000 + r * 1000);
    struct metrics_snapshot s = snap();
    ck_assert_uint_eq(s.round_records.count, 10);
    ck_assert_uint_eq(s.round_records.p50, 5);
    ck_assert_uint_eq(s.round_records.p90, 9);
    ck_assert_uint_eq(s.round_records.max, 10);
    ck_assert_uint_eq(s.round_ns.max, 10000);
    ck_assert_uint_eq(s.round_ns.sum, 55000);
}
END_TEST

static Suite *metrics_suite(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_metrics_cmd_of);
    tcase_add_test(tc, test_metrics_empty);
    tcase_add_test(tc, test_metrics_sets_merge);
    tcase_add_test(tc, test_metrics_threads);
    tcase_add_test(tc, test_metrics_reset);
    tcase_add_test(tc, test_metrics_journal_rounds);
    suite_add_tcase(s, tc);
    return s;
}

SUITE_REGISTER(metrics_suite)
