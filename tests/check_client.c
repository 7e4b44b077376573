/* check_client.c -- the client side's moving parts that need no server:
 * the latency histogram (common/hist.c), reply framing
 * (client/lib/frame.c), the kinds of reply (client/lib/replykind.c) and the
 * preload's people (client/lib/preload.c). The pipelined session and the
 * control queries against a fake server are check_client_pipeline.c's and
 * check_client_ctl.c's.
 */
#include <stdint.h>
#include <string.h>
#include "suites.h"
#include "hist.h"
#include "proto.h"
#include "../client/lib/frame.h"
#include "../client/lib/preload.h"
#include "../client/lib/replykind.h"

/* ---- hist --------------------------------------------------------------- */

START_TEST(test_hist_buckets)
{
    for (uint64_t v = 0; v < 100000; v += 7) {
        unsigned b = hist_bucket_of(v);
        ck_assert_uint_lt(b, HIST_BUCKETS);
        ck_assert_uint_le(hist_bucket_low(b), v);
        ck_assert_uint_ge(hist_bucket_high(b), v);
    }
    ck_assert_uint_lt(hist_bucket_of(UINT64_MAX), HIST_BUCKETS);
    ck_assert_uint_eq(hist_bucket_high(hist_bucket_of(UINT64_MAX)), UINT64_MAX);
    for (unsigned b = 1; b < HIST_BUCKETS; b++)
        ck_assert_uint_eq(hist_bucket_low(b), hist_bucket_high(b - 1) + 1);
}
END_TEST

START_TEST(test_hist_percentiles)
{
    static struct hist h, g;
    hist_init(&h);
    ck_assert_uint_eq(hist_percentile(&h, 50), 0);
    for (uint64_t v = 1; v <= 10; v++)
        hist_record(&h, v);
    ck_assert_uint_eq(hist_percentile(&h, 50), 5);   /* exact below 32 */
    ck_assert_uint_eq(hist_percentile(&h, 100), 10);
    ck_assert_uint_eq(hist_percentile(&h, 0), 1);
    ck_assert(hist_mean(&h) == 5.5);

    hist_init(&g);
    for (uint64_t v = 1000; v < 1000000; v += 997)
        hist_record(&g, v);
    uint64_t p50 = hist_percentile(&g, 50), p90 = hist_percentile(&g, 90);
    uint64_t p99 = hist_percentile(&g, 99);
    ck_assert(p50 <= p90 && p90 <= p99 && p99 <= g.max);
    ck_assert(p50 > 500000 * 0.96 && p50 < 500000 * 1.04);
    hist_merge(&h, &g);
    ck_assert_uint_eq(h.count, 10 + g.count);
    ck_assert_uint_eq(h.min, 1);
    ck_assert_uint_eq(h.max, g.max);
}
END_TEST

/* ---- framing ------------------------------------------------------------ */

static int feed(struct framer *f, const char *line)
{
    return frame_line(f, line, strlen(line));
}

START_TEST(test_frame_single_lines)
{
    struct framer f;
    frame_init(&f);
    frame_begin(&f, PROTO_ADD);
    ck_assert_int_eq(feed(&f, "OK"), 1);
    ck_assert(!f.error && !f.bad);
    frame_begin(&f, PROTO_DELETE);
    ck_assert_int_eq(feed(&f, "Error: Amy Smith not found"), 1);
    ck_assert(f.error && !f.bad);
    frame_begin(&f, PROTO_COUNT);
    ck_assert_int_eq(feed(&f, "12x"), 1);
    ck_assert_int_eq(f.bad, 1);
    frame_begin(&f, PROTO_DIGEST);
    ck_assert_int_eq(feed(&f, "0123456789abcdef0123456789abcdef"
                              "0123456789abcdef0123456789abcdef"), 1);
    ck_assert_int_eq(f.bad, 0);
    frame_begin(&f, PROTO_FIND);
    ck_assert_int_eq(feed(&f, "Smith, Amy                     --"
                              " 123-45-6789   30"), 1);
    ck_assert_int_eq(f.bad, 0);
    frame_begin(&f, PROTO_QUIT);
    ck_assert_int_eq(feed(&f, "Bye"), 1);
    ck_assert_int_eq(f.state, FRAME_IDLE);
}
END_TEST

/* Lines that only look like the right reply (a hostile server's): each is
 * counted bad, and the sound one next to it is not. */
static int bad_as(int cmd, const char *line)
{
    struct framer f;

    frame_init(&f);
    frame_begin(&f, cmd);
    feed(&f, line);
    return f.bad;
}

START_TEST(test_frame_lookalikes)
{
    ck_assert_int_eq(bad_as(PROTO_FIND, "Smith, Amy                     --"
                                        " 123-45-6789 -999"), 1);
    ck_assert_int_eq(bad_as(PROTO_FIND, "Smith, Amy                     --"
                                        " 123-45-6789 NaN!"), 1);
    ck_assert_int_eq(bad_as(PROTO_FIND, "Smith, Amy                     --"
                                        " 123-45-6789  151"), 1);
    ck_assert_int_eq(bad_as(PROTO_FIND, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                                        " 123-45-6789   30"), 1);
    ck_assert_int_eq(bad_as(PROTO_FIND, "Smith, Amy                     --"
                                        " 123-45-6789  150"), 0);
    ck_assert_int_eq(bad_as(PROTO_FIND, "Smith, Amy                     --"
                                        " 123-45-6789    0"), 0);
    ck_assert_int_eq(bad_as(PROTO_COUNT, "99999999999999999999"), 1);
    ck_assert_int_eq(bad_as(PROTO_COUNT, "9999999999999999999"), 0);
    ck_assert_int_eq(bad_as(PROTO_CHECK, "OKAY? NO: red node with red child"), 1);
    ck_assert_int_eq(bad_as(PROTO_CHECK, "OK 3 lost, all invariants hold"), 1);
    ck_assert_int_eq(bad_as(PROTO_CHECK, "OK entries, all invariants hold"), 1);
    ck_assert_int_eq(bad_as(PROTO_CHECK, "OK 3 entries, all invariants hold"), 0);
    ck_assert_int_eq(bad_as(PROTO_CHECK, "OK 1 entry, all invariants hold"), 0);
    ck_assert_int_eq(bad_as(PROTO_CHECK, "OK 0 entries, all invariants hold"), 0);
}
END_TEST

START_TEST(test_frame_multi_line)
{
    static const char head[] = "__________________________________________________";
    static const char tail[] = "--------------------------------------------------";
    struct framer f;
    frame_init(&f);
    frame_begin(&f, PROTO_PRINT);
    ck_assert_int_eq(feed(&f, head), 0);
    ck_assert_int_eq(feed(&f, "Smith, Amy                     --"
                              " 123-45-6789   30"), 0);
    ck_assert_int_eq(feed(&f, "OK"), 0);           /* garbage inside */
    ck_assert_int_eq(feed(&f, tail), 1);
    ck_assert_int_eq(f.bad, 1);
    ck_assert_uint_eq(f.lines, 4);

    frame_begin(&f, PROTO_PRINT);                  /* an error instead */
    ck_assert_int_eq(feed(&f, "Error: busy"), 1);

    frame_begin(&f, PROTO_STATS);
    ck_assert_int_eq(feed(&f, "mode fine"), 0);
    ck_assert_int_eq(feed(&f, "END"), 1);
    frame_begin(&f, PROTO_HELP);
    ck_assert_int_eq(feed(&f, "END"), 1);

    /* TREE's DOT runs to its END too, its "}" included. */
    frame_begin(&f, PROTO_TREE);
    ck_assert_int_eq(feed(&f, "digraph rbtree {"), 0);
    ck_assert_int_eq(feed(&f, "}"), 0);
    ck_assert_int_eq(feed(&f, "END"), 1);
    ck_assert(!f.error && !f.bad);
    frame_begin(&f, PROTO_TREE);
    ck_assert_int_eq(feed(&f, "Error: bad depth: a whole number from 1 "
                              "to 10"), 1);
    ck_assert(f.error);

    /* A listing where none was asked for is still read to its end. */
    frame_begin(&f, PROTO_ADD);
    ck_assert_int_eq(feed(&f, head), 0);
    ck_assert_int_eq(feed(&f, tail), 1);
    ck_assert_int_eq(f.bad, 1);
}
END_TEST

/* ---- reply kinds --------------------------------------------------------- */

static int kind(int cmd, const char *line)
{
    return replykind_of(cmd, line, strlen(line));
}

START_TEST(test_replykind_outcomes)
{
    ck_assert_int_eq(kind(PROTO_ADD, "OK"), RK_OK);
    ck_assert_int_eq(kind(PROTO_COUNT, "0"), RK_OK);
    ck_assert_int_eq(kind(PROTO_FIND, "Smith, Amy                     --"
                                      " 123-45-6789   30"), RK_OK);
    ck_assert_int_eq(kind(PROTO_FIND, "Error: Amy Smith not found"),
                     RK_NOT_FOUND);
    ck_assert_int_eq(kind(PROTO_FIND, "Error: No Amy Smith"), RK_NOT_FOUND);
    ck_assert_int_eq(kind(PROTO_DELETE, "Error: No Amy Smith"),
                     RK_NOT_FOUND);
    ck_assert_int_eq(kind(PROTO_ADD, "Error: Amy Smith already exists"),
                     RK_EXISTS);
}
END_TEST

START_TEST(test_replykind_errors)
{
    /* The same words are real errors to the wrong request. */
    ck_assert_int_eq(kind(PROTO_ADD, "Error: No Amy Smith"), RK_ERROR);
    ck_assert_int_eq(kind(PROTO_FIND, "Error: Amy Smith already exists"),
                     RK_ERROR);
    ck_assert_int_eq(kind(PROTO_INVALID, "Error: Bad command: No"),
                     RK_ERROR);
    ck_assert_int_eq(kind(PROTO_ADD, "Error: bad SSN: must be DDD-DD-DDDD"),
                     RK_ERROR);
    ck_assert_int_eq(kind(PROTO_FIND, "Error: authentication required"),
                     RK_ERROR);
    ck_assert_int_eq(kind(PROTO_FIND, "Error: "), RK_ERROR);
    ck_assert_int_eq(kind(PROTO_FIND, "Error"), RK_OK);   /* no ": " */
    ck_assert_str_eq(replykind_name(RK_NOT_FOUND), "not found");
    ck_assert_str_eq(replykind_name(RK_KINDS), "?");

    /* The framer tags each reply with its kind. */
    struct framer f;
    frame_init(&f);
    frame_begin(&f, PROTO_DELETE);
    ck_assert_int_eq(feed(&f, "Error: No Amy Smith"), 1);
    ck_assert_int_eq(f.kind, RK_NOT_FOUND);
    frame_begin(&f, PROTO_DELETE);
    ck_assert_int_eq(feed(&f, "OK"), 1);
    ck_assert_int_eq(f.kind, RK_OK);
}
END_TEST

START_TEST(test_preload_people)
{
    struct person a, b;
    for (uint64_t i = 0; i < 5000; i += 13) {
        preload_entry(i, &a);
        preload_entry(i + 1, &b);
        ck_assert(entry_name_ok(a.last, strlen(a.last)));
        ck_assert(entry_name_ok(a.first, strlen(a.first)));
        ck_assert(entry_ssn_ok(a.ssn, strlen(a.ssn)));
        ck_assert(a.age >= 0 && a.age <= 99);
        ck_assert(strcmp(a.last, b.last) || strcmp(a.first, b.first));
        ck_assert_ptr_nonnull(strchr(a.last, PRELOAD_MARK));
    }
    preload_entry(0, &a);
    preload_entry(NAMES_NFIRST, &b);    /* same first name, next last name */
    ck_assert_str_eq(a.first, b.first);
    ck_assert_str_ne(a.last, b.last);
    ck_assert_str_eq(a.last, "Adams-Adams");    /* names that read as names */
    ck_assert_str_eq(b.last, "Baker-Adams");
    preload_entry(999999, &a);                  /* the largest --preload */
    ck_assert(entry_name_ok(a.last, strlen(a.last)));
}
END_TEST

static Suite *client_suite(void)
{
    Suite *s = suite_create("client");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_hist_buckets);
    tcase_add_test(core, test_hist_percentiles);
    tcase_add_test(core, test_frame_single_lines);
    tcase_add_test(core, test_frame_lookalikes);
    tcase_add_test(core, test_frame_multi_line);
    tcase_add_test(core, test_replykind_outcomes);
    tcase_add_test(core, test_replykind_errors);
    tcase_add_test(core, test_preload_people);
    suite_add_tcase(s, core);
    return s;
}

SUITE_REGISTER(client_suite)
