/* check_client_pipeline.c -- the pipelined session (client/lib/pipeline.c,
 * client/lib/source.c) against the fake server of clienttest.h: requests
 * from a generated stream or from text on a pipe, sent without waiting for
 * replies and at a byte rate when asked; a server that hangs, times out,
 * hangs up, answers garbage or is not there ends the run with the reason.
 */
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "suites.h"
#include "timeutil.h"
#include "../client/lib/gen.h"
#include "../client/lib/pipeline.h"
#include "../client/lib/replykind.h"
#include "clienttest.h"

/* A generated stream of n events over a tiny name list. */
static struct namelist names;
static struct gen gen;

static void gen_source(struct pl_source *src, uint64_t n)
{
    char err[100];
    static const char list[] = "Smith\nJones\nBrown\nTaylor\n";
    struct gen_opts o = { .nevents = n, .seed = 1, .shard_n = 1,
                          .mix = GEN_MIX_DEFAULT };
    ck_assert_int_eq(names_parse(&names, list, strlen(list), err,
                                 sizeof(err)), 0);
    ck_assert_int_eq(gen_init(&gen, &names, &o), 0);
    pl_source_gen(src, &gen);
}

/* A source reading text from a pipe. */
static int pipe_text(const char *text)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(write(p[1], text, strlen(text)), (ssize_t)strlen(text));
    close(p[1]);
    return p[0];
}

START_TEST(test_pipeline_pipelines)
{
    struct fake f = { 0 };
    struct pl_source src;
    struct pl_result r;
    fake_start(&f, FAKE_SLOW);
    gen_source(&src, 400);
    struct pl_opts o = { .host = "127.0.0.1", .port = f.port,
                         .timeout_s = 20, .hang_s = 5 };
    ck_assert_int_eq(pl_run(&o, &src, &r, NULL), 0);
    ck_assert_uint_eq(r.requests, 402);
    ck_assert_uint_eq(r.replies, 402);
    ck_assert_uint_eq(r.errors + r.bad, 0);
    /* The fake takes 300 us per reply; the sender does not wait. */
    ck_assert_uint_gt(r.inflight_max, 100);
    ck_assert_uint_gt(r.lat_min, 0);
    ck_assert(r.lat_p50 <= r.lat_p90 && r.lat_p90 <= r.lat_p99 &&
              r.lat_p99 <= r.lat_max);
    ck_assert_uint_ge(r.service_ns, r.lat_max);
    fake_stop(&f);
}
END_TEST

START_TEST(test_pipeline_fd_source)
{
    struct fake f = { 0 };
    struct pl_source src;
    struct pl_fdsource fs;
    struct pl_result r;
    fake_start(&f, FAKE_GOOD);
    /* blanks are not sent; the last line has no newline */
    int fd = pipe_text("COUNT\n\n   \nPRINT\r\nBOGUS\nDONE");
    pl_source_fd(&src, &fs, fd);
    struct pl_opts o = { .host = "127.0.0.1", .port = f.port,
                         .timeout_s = 10 };
    ck_assert_int_eq(pl_run(&o, &src, &r, NULL), 0);
    ck_assert_uint_eq(r.requests, 4);
    ck_assert_uint_eq(r.replies, 4);
    ck_assert_uint_eq(r.errors, 1);            /* BOGUS */
    ck_assert_uint_eq(r.kinds[RK_ERROR], 1);
    ck_assert_uint_eq(r.kinds[RK_OK], 3);
    ck_assert_uint_eq(r.bad, 0);
    close(fd);
    fake_stop(&f);
}
END_TEST

START_TEST(test_pipeline_rate)
{
    struct fake f = { .print_lines = 1000 };    /* ~51 KB per PRINT */
    struct pl_source src;
    struct pl_fdsource fs;
    struct pl_result r;
    fake_start(&f, FAKE_GOOD);
    int fd = pipe_text("PRINT\nPRINT\nDONE\n");
    pl_source_fd(&src, &fs, fd);
    struct pl_opts o = { .host = "127.0.0.1", .port = f.port,
                         .rate = 200000, .timeout_s = 10 };
    ck_assert_int_eq(pl_run(&o, &src, &r, NULL), 0);
    ck_assert_uint_gt(r.bytes_in, 100000);
    double secs = time_ns_to_s(r.service_ns);
    double want = (double)r.bytes_in / 200000.0;
    ck_assert_msg(secs >= want * 0.9, "%.0f bytes in %.3f s: over the rate",
                  (double)r.bytes_in, secs);
    close(fd);
    fake_stop(&f);
}
END_TEST

START_TEST(test_pipeline_hang_and_timeout)
{
    struct fake f = { 0 };
    struct pl_source src;
    struct pl_result r;
    fake_start(&f, FAKE_SILENT);
    gen_source(&src, 100);
    struct pl_opts o = { .host = "127.0.0.1", .port = f.port,
                         .hang_s = 0.3 };
    uint64_t t0 = time_now_ns();
    ck_assert_int_eq(pl_run(&o, &src, &r, NULL), -1);
    ck_assert_int_eq(r.fail, PL_ERR_HUNG);
    ck_assert_ptr_nonnull(strstr(r.what, "hung"));
    ck_assert(time_now_ns() - t0 < 3 * TIME_NS_PER_SEC);
    fake_stop(&f);
    gen_destroy(&gen);
    names_free(&names);

    struct fake g = { 0 };
    fake_start(&g, FAKE_SILENT);
    gen_source(&src, 100);
    struct pl_opts t = { .host = "127.0.0.1", .port = g.port,
                         .timeout_s = 0.3 };
    ck_assert_int_eq(pl_run(&t, &src, &r, NULL), -1);
    ck_assert_int_eq(r.fail, PL_ERR_TIMEOUT);
    fake_stop(&g);
}
END_TEST

START_TEST(test_pipeline_hangup)
{
    struct fake f = { 0 };
    struct pl_source src;
    struct pl_result r;
    fake_start(&f, FAKE_HANGUP);
    gen_source(&src, 200);
    struct pl_opts o = { .host = "127.0.0.1", .port = f.port,
                         .timeout_s = 10 };
    ck_assert_int_eq(pl_run(&o, &src, &r, NULL), -1);
    ck_assert_msg(r.fail == PL_ERR_CLOSED || r.fail == PL_ERR_RESET,
                  "fail %s: %s", pl_fail_name(r.fail), r.what);
    ck_assert_uint_eq(r.replies, 5);
    fake_stop(&f);
}
END_TEST

START_TEST(test_pipeline_garbage)
{
    struct fake f = { 0 };
    struct pl_source src;
    struct pl_result r;
    fake_start(&f, FAKE_GARBAGE);
    gen_source(&src, 200);
    struct pl_opts o = { .host = "127.0.0.1", .port = f.port,
                         .timeout_s = 10, .hang_s = 2 };
    pl_run(&o, &src, &r, NULL);         /* any ending, but an ending */
    ck_assert_uint_gt(r.bad, 0);
    ck_assert_uint_le(r.replies, r.requests);
    fake_stop(&f);
}
END_TEST

START_TEST(test_pipeline_refused)
{
    struct fake f = { 0 };
    struct pl_source src;
    struct pl_result r;
    fake_start(&f, FAKE_GOOD);
    fake_stop(&f);                      /* nobody listens there now */
    gen_source(&src, 10);
    struct pl_opts o = { .host = "127.0.0.1", .port = f.port,
                         .timeout_s = 5 };
    ck_assert_int_eq(pl_run(&o, &src, &r, NULL), -1);
    ck_assert_int_eq(r.fail, PL_ERR_CONNECT);
    struct pl_opts bad = { .host = "no-such-host.invalid", .port = "1" };
    ck_assert_int_eq(pl_run(&bad, &src, &r, NULL), -1);
    ck_assert_int_eq(r.fail, PL_ERR_CONNECT);
}
END_TEST

static Suite *client_pipeline_suite(void)
{
    Suite *s = suite_create("client_pipeline");
    TCase *net = tcase_create("network");
    tcase_set_timeout(net, 20);
    tcase_add_test(net, test_pipeline_pipelines);
    tcase_add_test(net, test_pipeline_fd_source);
    tcase_add_test(net, test_pipeline_rate);
    suite_add_tcase(s, net);

    TCase *errors = tcase_create("errors");
    tcase_set_timeout(errors, 20);
    tcase_add_test(errors, test_pipeline_hang_and_timeout);
    tcase_add_test(errors, test_pipeline_hangup);
    tcase_add_test(errors, test_pipeline_garbage);
    tcase_add_test(errors, test_pipeline_refused);
    suite_add_tcase(s, errors);
    return s;
}

SUITE_REGISTER(client_pipeline_suite)
