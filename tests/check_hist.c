/* check_hist.c -- the latency histogram's percentiles (common/hist.c) on
 * inputs whose answer is known exactly: below HIST_SUB every value has a
 * bucket of its own, above it a percentile is the upper edge of the bucket
 * holding the ranked value, clamped into [min, max]; the summary STATS and
 * /metrics print; the relaxed writer and reader (one writer, readers on
 * other threads) and hist_clear. (check_client.c tests the buckets.) */
#include <pthread.h>
#include <string.h>
#include "suites.h"
#include "hist.h"

static struct hist h, g;

static void setup(void)
{
    hist_init(&h);
    hist_init(&g);
}

static void expect_summary(const struct hist *x, uint64_t p50, uint64_t p90,
                           uint64_t p99, uint64_t p999, uint64_t max)
{
    struct hist_summary s;

    hist_summarize(x, &s);
    ck_assert_uint_eq(s.p50, p50);
    ck_assert_uint_eq(s.p90, p90);
    ck_assert_uint_eq(s.p99, p99);
    ck_assert_uint_eq(s.p999, p999);
    ck_assert_uint_eq(s.max, max);
    ck_assert_uint_eq(s.count, x->count);
    ck_assert_uint_eq(s.sum, x->sum);
}

START_TEST(test_hist_empty_summary_is_zero)
{
    expect_summary(&h, 0, 0, 0, 0, 0);
}
END_TEST

/* 1..20: ranks 10, 18, 20 (ceil of 19.8) and 20, exact below HIST_SUB. */
START_TEST(test_hist_percentiles_exact_below_sub)
{
    for (uint64_t v = 20; v >= 1; v--)
        hist_record(&h, v);
    expect_summary(&h, 10, 18, 20, 20, 20);
}
END_TEST

/* 1..1000 once each. Rank 500 is 500, in the bucket [496, 503] (8 values
 * wide from 256 to 511); rank 900 is 900 in [896, 911] and rank 990 is 990
 * in [976, 991] (16 wide from 512); rank 999 is 999 in [992, 1007],
 * clamped to the max, 1000. */
START_TEST(test_hist_percentiles_bucket_edges)
{
    for (uint64_t v = 1; v <= 1000; v++)
        hist_record(&h, v);
    expect_summary(&h, 503, 911, 991, 1000, 1000);
    ck_assert_uint_eq(hist_bucket_low(hist_bucket_of(500)), 496);
    ck_assert_uint_eq(hist_bucket_low(hist_bucket_of(990)), 976);
}
END_TEST

/* A tail only p99.9 sees: 990 requests of 10 ns, 10 of 1 ms. */
START_TEST(test_hist_percentiles_tail)
{
    for (int i = 0; i < 990; i++)
        hist_record(&h, 10);
    for (int i = 0; i < 10; i++)
        hist_record(&h, 1000000);
    expect_summary(&h, 10, 10, 10, 1000000, 1000000);
    /* one more slow one moves p99 into the tail: rank 991 of 1001 */
    hist_record(&h, 1000000);
    ck_assert_uint_eq(hist_percentile(&h, 99), 1000000);
}
END_TEST

START_TEST(test_hist_relaxed_equals_plain)
{
    for (uint64_t v = 0; v < 50000; v += 13) {
        hist_record(&h, v * v);
        hist_record_relaxed(&g, v * v);
    }
    ck_assert_int_eq(memcmp(&h, &g, sizeof(h)), 0);

    static struct hist m;
    hist_init(&m);
    hist_merge_relaxed(&m, &g);
    hist_merge_relaxed(&m, &g);
    hist_merge(&h, &g);
    ck_assert_int_eq(memcmp(&h, &m, sizeof(h)), 0);
}
END_TEST

START_TEST(test_hist_clear_is_init)
{
    static struct hist fresh;

    hist_init(&fresh);
    for (uint64_t v = 7; v < 10000000; v *= 3)
        hist_record_relaxed(&h, v);
    hist_clear(&h);
    ck_assert_int_eq(memcmp(&h, &fresh, sizeof(h)), 0);
    hist_clear(&h);                     /* empty: nothing to do */
    ck_assert_int_eq(memcmp(&h, &fresh, sizeof(h)), 0);
    hist_merge_relaxed(&g, &h);         /* an empty one adds nothing */
    ck_assert_int_eq(memcmp(&g, &fresh, sizeof(g)), 0);
}
END_TEST

/* One writer, one reader merging meanwhile (run under ThreadSanitizer by
 * make tsan): the reader never sees more than was recorded, and once the
 * writer is done it sees every record. */
#define WRITES 200000

static void *writer(void *arg)
{
    (void)arg;
    for (uint64_t i = 0; i < WRITES; i++)
        hist_record_relaxed(&h, 100 + i % 5000);
    return NULL;
}

START_TEST(test_hist_relaxed_reader_while_writing)
{
    static struct hist r;
    pthread_t t;

    ck_assert_int_eq(pthread_create(&t, NULL, writer, NULL), 0);
    for (int i = 0; i < 200; i++) {
        hist_init(&r);
        hist_merge_relaxed(&r, &h);
        ck_assert_uint_le(r.count, WRITES);
        ck_assert_uint_le(hist_percentile(&r, 50), hist_percentile(&r, 99));
    }
    pthread_join(t, NULL);
    hist_init(&r);
    hist_merge_relaxed(&r, &h);
    ck_assert_uint_eq(r.count, WRITES);
    ck_assert_uint_eq(r.min, 100);
    ck_assert_uint_eq(r.max, 5099);
}
END_TEST

static Suite *hist_suite(void)
{
    Suite *s = suite_create("hist");
    TCase *tc = tcase_create("percentiles");

    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_hist_empty_summary_is_zero);
    tcase_add_test(tc, test_hist_percentiles_exact_below_sub);
    tcase_add_test(tc, test_hist_percentiles_bucket_edges);
    tcase_add_test(tc, test_hist_percentiles_tail);
    suite_add_tcase(s, tc);

    tc = tcase_create("relaxed");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_hist_relaxed_equals_plain);
    tcase_add_test(tc, test_hist_clear_is_init);
    tcase_add_test(tc, test_hist_relaxed_reader_while_writing);
    suite_add_tcase(s, tc);
    return s;
}

SUITE_REGISTER(hist_suite)
