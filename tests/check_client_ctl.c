/* check_client_ctl.c -- the control queries (client/lib/ctl.c) against the
 * fake server of clienttest.h: a one-line query and its time-out, and
 * ctl_request's whole replies, a listing read to its end and nothing more,
 * an error tagged as one, a server that hangs up. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "suites.h"
#include "proto.h"
#include "../client/lib/ctl.h"
#include "../client/lib/frame.h"
#include "../client/lib/replykind.h"
#include "clienttest.h"

START_TEST(test_ctl_query)
{
    struct fake f = { 0 };
    struct ctl c;
    char reply[64];
    fake_start(&f, FAKE_GOOD);
    ck_assert_int_eq(ctl_open(&c, "127.0.0.1", f.port, 2000), 0);
    ck_assert_int_eq(ctl_query(&c, "COUNT", reply, sizeof(reply)), 0);
    ck_assert_str_eq(reply, "3");
    ctl_close(&c);
    fake_stop(&f);

    struct fake g = { 0 };
    fake_start(&g, FAKE_SILENT);
    ck_assert_int_eq(ctl_open(&c, "127.0.0.1", g.port, 300), 0);
    ck_assert_int_eq(ctl_query(&c, "COUNT", reply, sizeof(reply)),
                     -ETIMEDOUT);
    close(c.fd);
    fake_stop(&g);
}
END_TEST

/* ctl_request's line callback: counts the lines and keeps the last. */
struct got_lines {
    int n;
    char last[64];
};

static void got_line(void *arg, const char *line, size_t len)
{
    struct got_lines *g = arg;
    g->n++;
    snprintf(g->last, sizeof(g->last), "%.*s", (int)len, line);
}

START_TEST(test_ctl_request)
{
    struct fake f = { .print_lines = 5 };
    struct ctl c;
    struct framer fr;
    struct got_lines g = { 0 };
    fake_start(&f, FAKE_GOOD);
    ck_assert_int_eq(ctl_open(&c, "127.0.0.1", f.port, 2000), 0);
    /* A listing: the head, five people and the tail, and nothing more. */
    ck_assert_int_eq(ctl_request(&c, "PRINT\n", 6, PROTO_PRINT, &fr,
                                 got_line, &g), 0);
    ck_assert_int_eq(g.n, 7);
    ck_assert_str_eq(g.last, "--------------------------------------------------");
    ck_assert(!fr.error && !fr.bad && fr.kind == RK_OK);
    /* The next reply is the next request's: COUNT's "3". */
    g.n = 0;
    ck_assert_int_eq(ctl_request(&c, "COUNT\n", 6, PROTO_COUNT, &fr,
                                 got_line, &g), 0);
    ck_assert_int_eq(g.n, 1);
    ck_assert_str_eq(g.last, "3");
    ck_assert_int_eq(ctl_request(&c, "BOGUS\n", 6, PROTO_INVALID, &fr,
                                 NULL, NULL), 0);
    ck_assert(fr.error && fr.kind == RK_ERROR);
    ctl_close(&c);
    fake_stop(&f);

    /* The server closes after five replies: the sixth request fails. */
    struct fake h = { 0 };
    fake_start(&h, FAKE_HANGUP);
    ck_assert_int_eq(ctl_open(&c, "127.0.0.1", h.port, 2000), 0);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(ctl_request(&c, "COUNT\n", 6, PROTO_COUNT, &fr,
                                     NULL, NULL), 0);
    int rc = ctl_request(&c, "COUNT\n", 6, PROTO_COUNT, &fr, NULL, NULL);
    ck_assert(rc == -EPIPE || rc == -ECONNRESET);
    ck_assert(strstr(c.err, "closed") || strstr(c.err, "reset"));
    ctl_abandon(&c);
    fake_stop(&h);
}
END_TEST

static void no_line(void *arg, const char *line)
{
    (void)line;
    ++*(int *)arg;
}

/* A block asked of a server that is not ssnserver (its first line is not
 * "name value") ends at that line with -EPROTO, not after the time
 * limit's wait for an END that never comes (-ETIMEDOUT). */
START_TEST(test_ctl_query_block_not_a_block)
{
    struct fake f = { 0 };
    struct ctl c;
    int lines = 0;
    fake_start(&f, FAKE_REDIS);
    ck_assert_int_eq(ctl_open(&c, "127.0.0.1", f.port, 5000), 0);
    ck_assert_int_eq(ctl_query_block(&c, "STATS", no_line, &lines), -EPROTO);
    ck_assert_int_eq(lines, 0);
    ck_assert_msg(strstr(c.err, "STATS answered '-ERR"), "%s", c.err);
    ctl_abandon(&c);
    fake_stop(&f);
}
END_TEST

static Suite *client_ctl_suite(void)
{
    Suite *s = suite_create("client_ctl");
    TCase *net = tcase_create("network");
    tcase_set_timeout(net, 20);
    tcase_add_test(net, test_ctl_query);
    tcase_add_test(net, test_ctl_request);
    tcase_add_test(net, test_ctl_query_block_not_a_block);
    suite_add_tcase(s, net);
    return s;
}

SUITE_REGISTER(client_ctl_suite)
