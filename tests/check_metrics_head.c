/* check_metrics_head.c -- unit tests for server/net/metrics_head.c, the
 * client's bytes of a request to --metrics-port.
 *
 *   parse:  GET and HEAD, the target up to '?' or '#', blank lines before
 *           the request line, CRLF or LF; the first Authorization header
 *           of any case, its value trimmed; each refusal with its status
 *           (400, 405, 505);
 *   basic:  "user:password" decoded, padding and a password with a colon
 *           in it; not base64, no colon, too long for the buffer: -1;
 *   scheme: any case, then spaces; a scheme that is only a prefix: NULL;
 *   wipe:   metrics_wipe_drain (metrics_conn.c) overwrites every byte of
 *           every chunk of the input it empties, past 8 chunks too, and
 *           returns on an empty buffer that still has a chunk (as a read
 *           of the stream's end leaves it).
 */
#include <stdio.h>
#include <string.h>
#include "suites.h"
#include <event2/buffer.h>
#include "../server/net/metrics_conn.h"
#include "../server/net/metrics_head.h"

static struct metrics_request rq;
static char head[512];

static int parse(const char *text)
{
    memset(&rq, 0, sizeof(rq));
    snprintf(head, sizeof(head), "%s", text);
    return metrics_head_parse(head, &rq);
}

START_TEST(test_head_get_and_head)
{
    ck_assert_int_eq(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"), 0);
    ck_assert_str_eq(rq.path, "/metrics");
    ck_assert_int_eq(rq.head_only, 0);
    ck_assert_ptr_null(rq.authorization);
    ck_assert_int_eq(parse("\r\n\nHEAD /metrics?x=1#y HTTP/1.0\n\n"), 0);
    ck_assert_str_eq(rq.path, "/metrics");
    ck_assert_int_eq(rq.head_only, 1);
}
END_TEST

START_TEST(test_head_authorization)
{
    ck_assert_int_eq(parse("GET / HTTP/1.1\r\nX: 1\r\n"
                           "authorization: \t Bearer s3cret \t\r\n"
                           "Authorization: Bearer second\r\n\r\n"), 0);
    ck_assert_str_eq(rq.path, "/");
    ck_assert_str_eq(rq.authorization, "Bearer s3cret");
    ck_assert_int_eq(parse("GET / HTTP/1.1\r\nAuthorization:\r\n\r\n"), 0);
    ck_assert_str_eq(rq.authorization, "");
}
END_TEST

START_TEST(test_head_refusals)
{
    ck_assert_int_eq(parse("\r\n"), 400);                   /* no line */
    ck_assert_int_eq(parse("GET\r\n\r\n"), 400);
    ck_assert_int_eq(parse("GET /metrics\r\n\r\n"), 400);   /* HTTP/0.9 */
    ck_assert_int_eq(parse("GET /metrics FTP/1.0\r\n\r\n"), 400);
    ck_assert_int_eq(parse("GET /metrics HTTP/1.1 x\r\n\r\n"), 400);
    ck_assert_int_eq(parse("GET metrics HTTP/1.1\r\n\r\n"), 400);
    ck_assert_int_eq(parse("GET / HTTP/1.1\r\nno colon\r\n\r\n"), 400);
    ck_assert_int_eq(parse("GET / HTTP/1.1\r\n: empty name\r\n\r\n"), 400);
    ck_assert_int_eq(parse("GET / HTTP/2.0\r\n\r\n"), 505);
    ck_assert_int_eq(parse("GET / HTTP/1.10\r\n\r\n"), 505);
    ck_assert_int_eq(parse("GET / HTTP/1.x\r\n\r\n"), 505);
    ck_assert_int_eq(parse("POST / HTTP/1.1\r\n\r\n"), 405);
    ck_assert_int_eq(parse("get / HTTP/1.1\r\n\r\n"), 405);
    /* A control byte in a line: a bare CR (RFC 9112), a DEL, a tab in
     * the request line. Tabs in a header's value are fine. */
    ck_assert_int_eq(parse("GET /me\rtrics HTTP/1.1\r\n\r\n"), 400);
    ck_assert_int_eq(parse("GET / HTTP/1.1\r\nAuthorization: Basic a\rb"
                           "\r\n\r\n"), 400);
    ck_assert_int_eq(parse("GET / HTTP/1.1\r\nX: \x7f\r\n\r\n"), 400);
    ck_assert_int_eq(parse("GET\t/ HTTP/1.1\r\n\r\n"), 400);
    ck_assert_int_eq(parse("GET / HTTP/1.1\r\nX:\ta\tb\r\n\r\n"), 0);
}
END_TEST

START_TEST(test_head_scheme)
{
    ck_assert_str_eq(metrics_auth_scheme("Basic  abc", "Basic"), "abc");
    ck_assert_str_eq(metrics_auth_scheme("bEARER x", "Bearer"), "x");
    ck_assert_ptr_null(metrics_auth_scheme("Basicabc", "Basic"));
    ck_assert_ptr_null(metrics_auth_scheme("Basi", "Basic"));
    ck_assert_ptr_null(metrics_auth_scheme("Digest x", "Basic"));
}
END_TEST

START_TEST(test_head_basic)
{
    unsigned char buf[64];
    const char *secret = NULL;

    /* "prometheus:Open-Sesame42", no padding needed. */
    ck_assert_int_eq(metrics_basic_password("cHJvbWV0aGV1czpPcGVuLVNlc2FtZTQy",
                                            buf, sizeof(buf), &secret), 13);
    ck_assert_int_eq(memcmp(secret, "Open-Sesame42", 13), 0);
    /* "u:pw" (one '='), then "u:a:b" (a colon in the password, "=="),
     * trailing spaces ignored. */
    ck_assert_int_eq(metrics_basic_password("dTpwdw==  ", buf, sizeof(buf),
                                            &secret), 2);
    ck_assert_int_eq(memcmp(secret, "pw", 2), 0);
    ck_assert_int_eq(metrics_basic_password("dTphOmI=", buf, sizeof(buf),
                                            &secret), 3);
    ck_assert_int_eq(memcmp(secret, "a:b", 3), 0);
    /* "u:" : an empty password. */
    ck_assert_int_eq(metrics_basic_password("dTo=", buf, sizeof(buf),
                                            &secret), 0);
    ck_assert_int_eq(metrics_basic_password("", buf, sizeof(buf), &secret),
                     -1);
    ck_assert_int_eq(metrics_basic_password("abc", buf, sizeof(buf),
                                            &secret), -1);   /* not 4k */
    ck_assert_int_eq(metrics_basic_password("!!!!", buf, sizeof(buf),
                                            &secret), -1);   /* not b64 */
    ck_assert_int_eq(metrics_basic_password("dXNlcg==", buf, sizeof(buf),
                                            &secret), -1);   /* "user" */
    ck_assert_int_eq(metrics_basic_password("dTpwdw==", buf, 5, &secret),
                     -1);                                    /* 6 > 5 */
}
END_TEST

START_TEST(test_wipe_drain)
{
    static const char req[] = "GET /metrics HTTP/1.1\r\n"
                              "Authorization: Basic dTpzZWNyZXQ=\r\n\r\n";
    static char chunk[20][sizeof(req)];
    struct evbuffer *in = evbuffer_new();

    ck_assert_ptr_nonnull(in);
    evbuffer_add(in, req, sizeof(req) - 1);             /* its own copy */
    for (int i = 0; i < 20; i++) {                      /* 20 more chunks */
        memcpy(chunk[i], req, sizeof(req));
        ck_assert_int_eq(evbuffer_add_reference(in, chunk[i],
                                                sizeof(req) - 1, NULL, NULL), 0);
    }
    metrics_wipe_drain(in);
    ck_assert_uint_eq(evbuffer_get_length(in), 0);
    for (int i = 0; i < 20; i++)
        for (size_t k = 0; k + 1 < sizeof(req); k++)
            ck_assert_msg(chunk[i][k] == 0, "chunk %d byte %zu kept", i, k);
    /* No bytes and one empty chunk, as a read that found the end of the
     * stream leaves it: peek counts the chunk, and nothing is to drain. */
    ck_assert_int_eq(evbuffer_expand(in, 4096), 0);
    metrics_wipe_drain(in);                     /* returns */
    ck_assert_uint_eq(evbuffer_get_length(in), 0);
    evbuffer_free(in);
}
END_TEST

static Suite *metrics_head_suite(void)
{
    Suite *s = suite_create("metrics_head");
    TCase *t = tcase_create("head");

    tcase_add_test(t, test_head_get_and_head);
    tcase_add_test(t, test_head_authorization);
    tcase_add_test(t, test_head_refusals);
    tcase_add_test(t, test_head_scheme);
    tcase_add_test(t, test_head_basic);
    tcase_add_test(t, test_wipe_drain);
    suite_add_tcase(s, t);
    return s;
}
SUITE_REGISTER(metrics_head_suite)
