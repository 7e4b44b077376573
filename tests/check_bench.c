/* check_bench.c -- ssn-bench's pure parts (client/bench/bench.h) with plain
 * strings: each dialect's request builder and reply parser, replies split
 * at every byte boundary and fed the way a connection feeds them, the
 * latency formatting (three significant digits, never a bucket edge), and
 * the /proc/PID/stat reader. The event loops are tested over real TCP by
 * tests/test-bench.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "suites.h"
#include "hist.h"
#include "../client/bench/bench.h"

#define D_SSN   (&bench_dialect_ssn)
#define D_REDIS (&bench_dialect_redis)
#define D_MC    (&bench_dialect_memcache)

static void expect_build(const struct bench_dialect *d, enum bench_op op,
                         uint64_t key, const char *want)
{
    char buf[BENCH_REQ_MAX];
    size_t n = d->build(op, key, "pw", buf);
    ck_assert_msg(n == strlen(want) && memcmp(buf, want, n) == 0,
                  "%s %s: got '%.*s', want '%s'", d->name, bench_op_name(op),
                  (int)n, buf, want);
}

START_TEST(test_bench_build)
{
    const char *v = "v42---------------------------";
    char want[128];

    expect_build(D_SSN, BOP_ADD, 42, "ADD f42 L42 30 123-45-6789\n");
    expect_build(D_SSN, BOP_FIND, 42, "FIND f42 L42\n");
    expect_build(D_SSN, BOP_DELETE, 42, "DELETE f42 L42\n");
    expect_build(D_SSN, BOP_AUTH, 0, "AUTH pw\n");
    snprintf(want, sizeof(want), "SET L42:f42 %s\r\n", v);
    expect_build(D_REDIS, BOP_ADD, 42, want);
    expect_build(D_REDIS, BOP_FIND, 42, "GET L42:f42\r\n");
    expect_build(D_REDIS, BOP_DELETE, 42, "DEL L42:f42\r\n");
    expect_build(D_REDIS, BOP_AUTH, 0, "AUTH pw\r\n");
    snprintf(want, sizeof(want), "set L42:f42 0 0 30\r\n%s\r\n", v);
    expect_build(D_MC, BOP_ADD, 42, want);
    expect_build(D_MC, BOP_FIND, 42, "get L42:f42\r\n");
    expect_build(D_MC, BOP_DELETE, 42, "delete L42:f42\r\n");
    ck_assert(!D_MC->has_auth);

    char k[BENCH_KEY_MAX], val[BENCH_VALUE_LEN];
    ck_assert_uint_eq(bench_key(9999999999ull, k), 23);
    bench_value(9999999999ull, val);
    ck_assert(memcmp(val, "v9999999999-", 12) == 0);
    ck_assert(bench_dialect_find("redis") == D_REDIS);
    ck_assert(bench_dialect_find("memcached") == NULL);
}
END_TEST

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* --new-keys: the first 2^16 new keys are all different, above the base,
 * not in order, and each fits a key (BENCH_KEY_MAX) at the largest base. */
START_TEST(test_bench_new_keys)
{
    enum { N = 1 << 16 };
    uint64_t *keys = malloc(N * sizeof(*keys)), rises = 0;
    char k[BENCH_KEY_MAX];

    ck_assert_ptr_nonnull(keys);
    for (uint64_t i = 0; i < N; i++) {
        keys[i] = bench_new_key(1000, i);
        ck_assert_uint_ge(keys[i], 1000);
        ck_assert_uint_lt(keys[i] - 1000, BENCH_NEW_KEYS);
        rises += i > 0 && keys[i] > keys[i - 1];
    }
    ck_assert_uint_gt(rises, N / 4);        /* scrambled, not a staircase */
    ck_assert_uint_lt(rises, 3 * N / 4);
    qsort(keys, N, sizeof(*keys), cmp_u64);
    for (uint64_t i = 1; i < N; i++)
        ck_assert_msg(keys[i] != keys[i - 1], "key %llu twice",
                      (unsigned long long)keys[i]);
    free(keys);
    uint64_t top = bench_new_key(1000000000ull, BENCH_NEW_KEYS - 1);
    ck_assert_uint_lt(bench_key(top, k), BENCH_KEY_MAX);
}
END_TEST

/* One reply case: the request it answers, the bytes, and what it is. */
struct rcase {
    const struct bench_dialect *d;
    enum bench_op op;
    uint64_t key;
    const char *bytes;
    int kind;                   /* enum bench_kind, or -1: a parse error */
    int is_error;
};

#define V7 "v7----------------------------"
static const struct rcase good[] = {
    { D_SSN, BOP_ADD, 7, "OK\n", BK_STORED, 0 },
    { D_SSN, BOP_ADD, 7, "Error: f7 L7 already exists\n", BK_EXISTS, 1 },
    { D_SSN, BOP_FIND, 7, "L7, f7                         -- 123-45-6789"
                          "   30\n", BK_FOUND, 0 },
    { D_SSN, BOP_FIND, 7, "Error: f7 L7 not found\r\n", BK_MISSING, 1 },
    { D_SSN, BOP_DELETE, 7, "OK\n", BK_DELETED, 0 },
    { D_SSN, BOP_DELETE, 7, "Error: f7 L7 not found\n", BK_MISSING, 1 },
    { D_SSN, BOP_ADD, 7, "Error: out of memory\n", BK_ERROR, 1 },
    { D_SSN, BOP_AUTH, 0, "OK\n", BK_STORED, 0 },
    { D_REDIS, BOP_ADD, 7, "+OK\r\n", BK_STORED, 0 },
    { D_REDIS, BOP_FIND, 7, "$30\r\n" V7 "\r\n", BK_FOUND, 0 },
    { D_REDIS, BOP_FIND, 7, "$-1\r\n", BK_MISSING, 0 },
    { D_REDIS, BOP_DELETE, 7, ":1\r\n", BK_DELETED, 0 },
    { D_REDIS, BOP_DELETE, 7, ":0\r\n", BK_MISSING, 0 },
    { D_REDIS, BOP_FIND, 7, "-ERR wrong kind\r\n", BK_ERROR, 1 },
    { D_REDIS, BOP_AUTH, 0, "+OK\r\n", BK_STORED, 0 },
    { D_MC, BOP_ADD, 7, "STORED\r\n", BK_STORED, 0 },
    { D_MC, BOP_ADD, 7, "NOT_STORED\r\n", BK_EXISTS, 0 },
    { D_MC, BOP_FIND, 7, "VALUE L7:f7 0 30\r\n" V7 "\r\nEND\r\n", BK_FOUND, 0 },
    { D_MC, BOP_FIND, 7, "VALUE L7:f7 5 30 1234\r\n" V7 "\r\nEND\r\n",
      BK_FOUND, 0 },
    { D_MC, BOP_FIND, 7, "END\r\n", BK_MISSING, 0 },
    { D_MC, BOP_DELETE, 7, "DELETED\r\n", BK_DELETED, 0 },
    { D_MC, BOP_DELETE, 7, "NOT_FOUND\r\n", BK_MISSING, 0 },
    { D_MC, BOP_ADD, 7, "SERVER_ERROR out of memory\r\n", BK_ERROR, 1 },
    { D_MC, BOP_FIND, 7, "ERROR\r\n", BK_ERROR, 1 },
};

/* Replies to another request than the one asked, and broken ones. */
static const struct rcase bad[] = {
    { D_SSN, BOP_FIND, 7, "L8, f8                         -- 123-45-6789"
                          "   30\n", -1, 0 },
    { D_SSN, BOP_FIND, 7, "OK\n", -1, 0 },
    { D_SSN, BOP_ADD, 7, "L7, f7                         -- 123-45-6789"
                         "   30\n", -1, 0 },
    { D_SSN, BOP_ADD, 7, "Error: authentication required\n", -1, 0 },
    { D_SSN, BOP_DELETE, 7, "Bye\n", -1, 0 },
    { D_REDIS, BOP_ADD, 7, ":1\r\n", -1, 0 },
    { D_REDIS, BOP_DELETE, 7, "+OK\r\n", -1, 0 },
    { D_REDIS, BOP_DELETE, 7, ":2\r\n", -1, 0 },
    { D_REDIS, BOP_FIND, 7, "$30\r\nv8----------------------------\r\n",
      -1, 0 },
    { D_REDIS, BOP_FIND, 7, "$30\r\n" V7 "xx", -1, 0 },
    { D_REDIS, BOP_FIND, 7, "$-2\r\n", -1, 0 },
    { D_REDIS, BOP_FIND, 7, "$99999\r\n", -1, 0 },
    { D_REDIS, BOP_FIND, 7, "*1\r\n", -1, 0 },
    { D_REDIS, BOP_FIND, 7, "-NOAUTH Authentication required.\r\n", -1, 0 },
    { D_MC, BOP_FIND, 7, "VALUE L8:f8 0 30\r\n" V7 "\r\nEND\r\n", -1, 0 },
    { D_MC, BOP_FIND, 7, "VALUE L7:f7 0 29\r\n", -1, 0 },
    { D_MC, BOP_FIND, 7, "VALUE L7:f7 0 30\r\n" V7 "\r\nEXT\r\n", -1, 0 },
    { D_MC, BOP_FIND, 7, "STORED\r\n", -1, 0 },
    { D_MC, BOP_ADD, 7, "DELETED\r\n", -1, 0 },
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

START_TEST(test_bench_parse_whole)
{
    for (size_t i = 0; i < NELEM(good); i++) {
        const struct rcase *c = &good[i];
        struct bench_reply r;
        char err[BENCH_ERR_MAX] = "";
        size_t len = strlen(c->bytes);
        long took = c->d->parse(c->op, c->key, c->bytes, len, &r, err,
                                sizeof(err));
        ck_assert_msg(took == (long)len, "%s '%s': took %ld of %zu (%s)",
                      c->d->name, c->bytes, took, len, err);
        ck_assert_msg((int)r.kind == c->kind, "%s '%s': kind %s", c->d->name,
                      c->bytes, bench_kind_name(r.kind));
        ck_assert_int_eq(!!r.is_error, c->is_error);
        ck_assert(r.text == c->bytes && r.text_len > 0 && r.text_len < len);
    }
}
END_TEST

START_TEST(test_bench_parse_bad)
{
    for (size_t i = 0; i < NELEM(bad); i++) {
        const struct rcase *c = &bad[i];
        struct bench_reply r;
        char err[BENCH_ERR_MAX] = "";
        long took = c->d->parse(c->op, c->key, c->bytes, strlen(c->bytes),
                                &r, err, sizeof(err));
        ck_assert_msg(took == -1, "%s '%s': took %ld, want -1", c->d->name,
                      c->bytes, took);
        ck_assert_msg(err[0] && !strchr(err, '\n') && !strchr(err, '\r'),
                      "%s: one printable line, not '%s'", c->d->name, err);
    }
    /* The message names the request and what came instead. */
    char err[BENCH_ERR_MAX];
    struct bench_reply r;
    D_MC->parse(BOP_ADD, 3, "DELETED\r\n", 9, &r, err, sizeof(err));
    ck_assert_str_eq(err, "memcache: unexpected reply to set L3:f3: "
                          "'DELETED'");
    D_SSN->parse(BOP_FIND, 3, "OK\n", 3, &r, err, sizeof(err));
    ck_assert_str_eq(err, "ssn: unexpected reply to FIND f3 L3: 'OK'");
}
END_TEST

/* A VALUE line's BYTES is digits only: strtoul takes "-N" and "+N", and
 * wraps -18446744073709551586 round to 30, which would pass for ssn-bench's
 * value length and take the data block after it as the value. */
START_TEST(test_bench_parse_mc_value_sign)
{
    static const char *const lines[] = {
        "VALUE L7:f7 0 -1",
        "VALUE L7:f7 0 -18446744073709551586",
        "VALUE L7:f7 0 +30",
    };
    for (size_t i = 0; i < NELEM(lines); i++) {
        char reply[160], want[BENCH_ERR_MAX], err[BENCH_ERR_MAX] = "";
        struct bench_reply r;
        int n = snprintf(reply, sizeof(reply), "%s\r\n" V7 "\r\nEND\r\n",
                         lines[i]);
        long took = D_MC->parse(BOP_FIND, 7, reply, (size_t)n, &r, err,
                                sizeof(err));
        ck_assert_msg(took == -1, "'%s': took %ld of %d, want -1", lines[i],
                      took, n);
        snprintf(want, sizeof(want), "memcache: unexpected reply to get "
                 "L7:f7: '%s'", lines[i]);
        ck_assert_str_eq(err, want);
    }
}
END_TEST

START_TEST(test_bench_parse_line_limit)
{
    size_t n = BENCH_REPLY_MAX + 10;
    char *big = malloc(n), err[BENCH_ERR_MAX];
    struct bench_reply r;
    memset(big, 'x', n);
    /* No line end yet and room left: wait. No line end in the limit:
     * fail rather than buffer forever. */
    ck_assert_int_eq(D_SSN->parse(BOP_ADD, 1, big, 100, &r, err,
                                  sizeof(err)), 0);
    ck_assert_int_eq(D_SSN->parse(BOP_ADD, 1, big, n, &r, err, sizeof(err)),
                     -1);
    ck_assert(strstr(err, "longer than") != NULL);
    free(big);
}
END_TEST

START_TEST(test_bench_parse_prefixes)
{
    /* Every proper prefix of a reply is "not yet": 0, never a guess. */
    for (size_t i = 0; i < NELEM(good); i++) {
        const struct rcase *c = &good[i];
        size_t len = strlen(c->bytes);
        for (size_t cut = 0; cut < len; cut++) {
            struct bench_reply r;
            char err[BENCH_ERR_MAX] = "";
            long took = c->d->parse(c->op, c->key, c->bytes, cut, &r, err,
                                    sizeof(err));
            ck_assert_msg(took == 0, "%s '%s' cut at %zu: %ld (%s)",
                          c->d->name, c->bytes, cut, took, err);
        }
    }
}
END_TEST

/* A connection's view of a pipeline: the replies to cases[0..n) arrive
 * in pieces; each piece is appended to what is left of the last one and
 * parsed from its start, as bench_conn.c does. */
struct feeder {
    const struct rcase *const *cases;
    size_t n, next;
    char buf[2048];
    size_t len;
};

static void feed(struct feeder *f, const char *bytes, size_t n)
{
    size_t pos = 0;
    ck_assert(f->len + n <= sizeof(f->buf));
    memcpy(f->buf + f->len, bytes, n);
    f->len += n;
    while (pos < f->len) {
        const struct rcase *c;
        struct bench_reply r;
        char err[BENCH_ERR_MAX] = "";
        ck_assert_msg(f->next < f->n, "bytes after the last reply");
        c = f->cases[f->next];
        long took = c->d->parse(c->op, c->key, f->buf + pos, f->len - pos,
                                &r, err, sizeof(err));
        ck_assert_msg(took >= 0, "reply %zu: %s", f->next, err);
        if (took == 0)
            break;
        ck_assert_int_eq(r.kind, c->kind);
        pos += (size_t)took;
        f->next++;
    }
    memmove(f->buf, f->buf + pos, f->len - pos);
    f->len -= pos;
}

/* One dialect's good replies, back to back, as one pipelined stream. */
static size_t stream_of(const struct bench_dialect *d,
                        const struct rcase **cases, char *out, size_t cap)
{
    size_t n = 0, len = 0;
    for (size_t i = 0; i < NELEM(good); i++) {
        if (good[i].d != d)
            continue;
        size_t l = strlen(good[i].bytes);
        ck_assert(len + l < cap);
        memcpy(out + len, good[i].bytes, l);
        len += l;
        cases[n++] = &good[i];
    }
    out[len] = '\0';
    return n;
}

START_TEST(test_bench_parse_split_everywhere)
{
    static const struct bench_dialect *const ds[] = { D_SSN, D_REDIS, D_MC };
    const struct bench_dialect *d = ds[_i];
    const struct rcase *cases[NELEM(good)];
    static char stream[2048];
    size_t n = stream_of(d, cases, stream, sizeof(stream));
    size_t len = strlen(stream);
    static struct feeder f;

    /* Cut once at every byte boundary. */
    for (size_t cut = 0; cut <= len; cut++) {
        memset(&f, 0, sizeof(f));
        f.cases = cases;
        f.n = n;
        feed(&f, stream, cut);
        feed(&f, stream + cut, len - cut);
        ck_assert_msg(f.next == n && f.len == 0, "%s cut at %zu: %zu of %zu "
                      "replies, %zu bytes left", d->name, cut, f.next, n,
                      f.len);
    }
    /* And one byte at a time. */
    memset(&f, 0, sizeof(f));
    f.cases = cases;
    f.n = n;
    for (size_t i = 0; i < len; i++)
        feed(&f, stream + i, 1);
    ck_assert_uint_eq(f.next, n);
    ck_assert_uint_eq(f.len, 0);
}
END_TEST

/* ---- the report ---------------------------------------------------------- */

static void expect_lat(uint64_t ns, const char *want)
{
    char buf[32];
    ck_assert_str_eq(bench_fmt_latency(ns, buf, sizeof(buf)), want);
}

START_TEST(test_bench_fmt_latency)
{
    expect_lat(213000, "0.213 ms");
    expect_lat(213456, "0.213 ms");
    expect_lat(1070000, "1.07 ms");
    expect_lat(1074999, "1.07 ms");
    expect_lat(12649999, "12.6 ms");
    expect_lat(12650001, "12.7 ms");
    expect_lat(126000000, "126 ms");
    expect_lat(45210, "0.0452 ms");
    expect_lat(999, "0.000999 ms");
    expect_lat(9995, "0.0100 ms");          /* rounds up a decade */
    expect_lat(999500, "1.00 ms");          /* rounds up a decade */
    expect_lat(9996000, "10.0 ms");
    expect_lat(999600000, "1.00 s");
    expect_lat(1260000000, "1.26 s");
    expect_lat(12600000000ull, "12.6 s");
    expect_lat(1000000, "1.00 ms");
    expect_lat(0, "0 ms");

    char buf[32];
    ck_assert_str_eq(hist_fmt3(12649, buf, sizeof(buf)), "12600");
    ck_assert_str_eq(hist_fmt3(0.001, buf, sizeof(buf)), "0.00100");
    ck_assert_str_eq(hist_fmt3(3.14159, buf, sizeof(buf)), "3.14");
    ck_assert(hist_round3(0.0012345) == 0.00123);
}
END_TEST

/* How many significant digits a formatted number shows. */
static int sig_digits(const char *s)
{
    int n = 0, started = 0;
    for (; *s && *s != ' '; s++) {
        if (*s < '0' || *s > '9')
            continue;
        started |= *s != '0';
        n += started;
    }
    return n;
}

START_TEST(test_bench_fmt_percentiles)
{
    /* Whatever the histogram holds, a percentile prints with at most
     * three significant digits (a bucket's edge has many more), and the
     * printed values keep their order. */
    static struct hist h;
    static const double ps[] = { 50, 90, 99, 99.9, 100 };
    uint64_t x = 88172645463325252ull;
    hist_init(&h);
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        hist_record(&h, 20000 + x % 50000000);      /* 20 us .. 50 ms */
    }
    double last = 0;
    for (size_t i = 0; i < NELEM(ps); i++) {
        char buf[32];
        uint64_t v = hist_percentile(&h, ps[i]);
        bench_fmt_latency(v, buf, sizeof(buf));
        ck_assert_msg(sig_digits(buf) <= 3, "p%g: '%s'", ps[i], buf);
        ck_assert(strstr(buf, " ms") != NULL);
        double shown = atof(buf);
        ck_assert_msg(shown >= last, "p%g: %s after %g", ps[i], buf, last);
        ck_assert(shown > v / 1e6 * 0.99 && shown < v / 1e6 * 1.01);
        last = shown;
    }
}
END_TEST

START_TEST(test_bench_stat_ticks)
{
    uint64_t t = 0;
    ck_assert_int_eq(bench_stat_ticks("1234 (ssnserver-buffe) S 1 1234 1234 "
                     "0 -1 4194560 300 0 0 0 150 50 0 0 20 0 5 0 99 0 0\n",
                     &t), 0);
    ck_assert_uint_eq(t, 200);
    /* A command name with spaces and ')' in it. */
    ck_assert_int_eq(bench_stat_ticks("7 (a) b (c)) R 1 7 7 0 -1 0 0 0 0 0 "
                     "3 4 0 0 20 0 1 0 5 0 0\n", &t), 0);
    ck_assert_uint_eq(t, 7);
    ck_assert_int_eq(bench_stat_ticks("garbage", &t), -1);
    ck_assert_int_eq(bench_proc_cpu_us(getpid(), &t), 0);
}
END_TEST

START_TEST(test_bench_show)
{
    char out[16];
    ck_assert_str_eq(bench_show("a\r\nb", 4, out, sizeof(out)), "a??b");
    ck_assert_str_eq(bench_show("0123456789abcdefghij", 20, out,
                                sizeof(out)), "0123456789ab...");
}
END_TEST

static Suite *bench_suite(void)
{
    Suite *s = suite_create("bench");
    TCase *dialects = tcase_create("dialects");
    tcase_add_test(dialects, test_bench_build);
    tcase_add_test(dialects, test_bench_new_keys);
    tcase_add_test(dialects, test_bench_parse_whole);
    tcase_add_test(dialects, test_bench_parse_bad);
    tcase_add_test(dialects, test_bench_parse_mc_value_sign);
    tcase_add_test(dialects, test_bench_parse_line_limit);
    tcase_add_test(dialects, test_bench_parse_prefixes);
    tcase_add_loop_test(dialects, test_bench_parse_split_everywhere, 0, 3);
    suite_add_tcase(s, dialects);

    TCase *report = tcase_create("report");
    tcase_add_test(report, test_bench_fmt_latency);
    tcase_add_test(report, test_bench_fmt_percentiles);
    tcase_add_test(report, test_bench_stat_ticks);
    tcase_add_test(report, test_bench_show);
    suite_add_tcase(s, report);
    return s;
}

SUITE_REGISTER(bench_suite)
